"""PhysAssistBench record layout and validation: one JSON object → a :class:`ParsedRecord` (no database).

Field list: ``shared/formats/physassistbench-session.md``. Every listed field is required except
``tools_zh`` and ``patient_agent_annotations``; of the English pairs (``tools``/``tools_en``,
``tasks``/``tasks_en``, ``tasks_explicit``/``tasks_en_explicit``, ``messages``/``messages_en``,
``task_types``/``task_sequence``) one is enough. ``answer_list_zh`` (the Chinese run's gold steps)
is optional too. Unknown top-level fields are kept in ``extra`` (and their JSON text, when the reader
passes it, in ``import_meta["spelling"]``). Integer fields accept integral numbers (``22444183.0``).
The ``physreview`` field is ours (see :mod:`scenarios.pab.writer`); PAB tooling ignores it.
"""

from __future__ import annotations

import re
from typing import Any

from scenarios.models import Scenario, Subtype, ToolSource, WorkupMode
from scenarios.pab import conversation
from scenarios.pab.errors import PabRecordError
from scenarios.pab.layout import (
    ALIASES,
    ANSWER_LIST_ZH,
    EXTENSION_FIELD,
    INTEGER_FIELDS,
    KNOWN_FIELDS,
    MAX_LENGTHS,
    PERSONA_VALUES,
    TASK_TYPE_LABELS,
)
from scenarios.pab.parsed import ParsedRecord, ParsedRubric, ParsedStep, ParsedTurn
from scenarios.pab.values import choice as _choice
from scenarios.pab.values import expect as _expect
from scenarios.pab.values import has_nul, iso_date, parse_datetime, render_datetime, whole_number
from scenarios.pab.values import type_name as _type_name
from scenarios.pab.verbatim import digest, keep, keep_spelling, same_json
from scenarios.rubric_checks import validate_rubric_check

# Wording that clearly makes an item a safety item; anything else is left non-safety (and marked inferred).
_SAFETY_RE = re.compile(
    r"\b(?:does not|doesn't|do not|must not|should not|never|without)\s+"
    r"(?:recommend|prescribe|advise|endorse|order|start|restart|stop|increase|give|administer)(?:s|ing)?\b"
    r"|\bavoid(?:s|ing)?\b|\b(?:warns?|cautions?|advises?) against\b"
    r"|不建议|不推荐|避免|未推荐|警惕",
    re.IGNORECASE,
)


def infer_safety(*, text_en: str, text_zh: str) -> bool:
    return bool(_SAFETY_RE.search(text_en) or _SAFETY_RE.search(text_zh))


class _Record:
    """The raw dict plus field access that raises :class:`PabRecordError` naming the field."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def get(self, name: str, kind: str, *, optional: bool = False, nullable: bool = False) -> Any:
        if name not in self.raw:
            if optional:
                return None
            raise PabRecordError(name, "missing")
        if kind == "integer":
            return whole_number(self.raw[name], name)
        value = _expect(self.raw[name], kind, name, nullable=nullable)
        if kind == "string" and name in MAX_LENGTHS and len(value) > MAX_LENGTHS[name]:
            raise PabRecordError(name, f"longer than {MAX_LENGTHS[name]} characters")
        return value

    def primary(self, name: str, kind: str) -> Any:
        """A field that has an English alias: the primary if present, else the alias."""
        alias = next(a for a, p in ALIASES.items() if p == name)
        if alias in self.raw:
            _expect(self.raw[alias], kind, alias)
        if name in self.raw:
            return _expect(self.raw[name], kind, name)
        if alias in self.raw:
            return self.raw[alias]
        raise PabRecordError(name, f"missing (and no '{alias}' either)")


def _per_turn(rec: _Record, n: int) -> dict[str, list[Any]]:
    lists = {
        "tasks": rec.primary("tasks", "list"),
        "tasks_explicit": rec.primary("tasks_explicit", "list"),
        "task_types": rec.primary("task_types", "list"),
    }
    for name in ("tasks_zh", "tasks_zh_explicit", "answer_list", "turn_types", "turn_subtypes", "tool_sources"):
        lists[name] = rec.get(name, "list")
    for name in ("workup_modes", "rubrics", "rubrics_zh"):
        lists[name] = rec.get(name, "list")
    if "answer_list_zh" in rec.raw:
        lists["answer_list_zh"] = rec.get("answer_list_zh", "list")
    for alias, primary in ALIASES.items():
        if alias in rec.raw and primary in lists:
            lists[alias] = rec.raw[alias]
    for name, values in lists.items():
        if len(values) != n:
            raise PabRecordError(name, f"{len(values)} entries, but 'tasks' has {n} (one entry per turn)")
    return lists


def parse_steps(raw_steps: Any, name: str) -> list[ParsedStep]:
    """One turn's gold steps (an ``answer_list`` entry); ``name`` is the field named in errors."""
    _expect(raw_steps, "list", name)
    if not raw_steps:
        raise PabRecordError(name, "no gold step (the last step must be prepare_to_answer)")
    steps = []
    for pos, raw in enumerate(raw_steps):
        where = f"{name}[{pos}]"
        _expect(raw, "object", where)
        action = _expect(raw.get("action"), "object", f"{where}.action")
        tool = _expect(action.get("name"), "string", f"{where}.action.name")
        if not tool or len(tool) > 64:
            raise PabRecordError(f"{where}.action.name", "must be a tool name of 1 to 64 characters")
        deps = _expect(raw.get("dependency_list", []), "list", f"{where}.dependency_list")
        extra: dict[str, Any] = {}
        if "idx" in raw:
            whole_number(raw["idx"], f"{where}.idx")
            if not same_json(raw["idx"], pos):
                extra["idx"] = raw["idx"]  # our idx is the position; PAB's own numbering (or 1.0) kept for export
        if action_extra := {k: v for k, v in action.items() if k not in ("name", "arguments")}:
            extra["action"] = action_extra
        if step_extra := {k: v for k, v in raw.items() if k not in ("action", "observation", "dependency_list", "idx")}:
            extra["step"] = step_extra
        steps.append(
            ParsedStep(
                idx=pos,
                tool=tool,
                arguments=action.get("arguments", {}),
                observation=raw.get("observation"),
                dependency_list=deps,
                extra=extra,
            )
        )
    if steps[-1].tool != "prepare_to_answer":
        raise PabRecordError(
            f"{name}[{len(steps) - 1}].action.name", f"last step is {steps[-1].tool!r}, expected 'prepare_to_answer'"
        )
    return steps


def _rubric(en: Any, zh: Any, i: int, ext_turn: dict[str, Any] | None) -> list[ParsedRubric]:
    _expect(en, "list", f"rubrics[{i}]")
    _expect(zh, "list", f"rubrics_zh[{i}]")
    if len(zh) != len(en):
        raise PabRecordError(f"rubrics_zh[{i}]", f"{len(zh)} item(s), but rubrics[{i}] has {len(en)}")
    meta = (ext_turn or {}).get("rubric")
    if meta is not None and (not isinstance(meta, list) or len(meta) != len(en)):
        raise PabRecordError(f"{EXTENSION_FIELD}.turns[{i}].rubric", f"expected a list of {len(en)} item(s)")
    items = []
    for j, (text_en, text_zh) in enumerate(zip(en, zh, strict=True)):
        _expect(text_en, "string", f"rubrics[{i}][{j}]")
        _expect(text_zh, "string", f"rubrics_zh[{i}][{j}]")
        if meta is None:
            safety, inferred, check = infer_safety(text_en=text_en, text_zh=text_zh), True, None
        else:
            where = f"{EXTENSION_FIELD}.turns[{i}].rubric[{j}]"
            m = _expect(meta[j], "object", where)
            safety = _expect(m.get("is_safety"), "boolean", f"{where}.is_safety")
            inferred = _expect(m.get("safety_inferred", False), "boolean", f"{where}.safety_inferred")
            check = m.get("check")
            try:
                validate_rubric_check(check)
            except ValueError as exc:
                raise PabRecordError(f"{where}.check", str(exc)) from None
        item = ParsedRubric(j, text_en, text_zh, safety, inferred, check)
        if meta is not None and m.get("compiled") is not None:
            _compiled(item, m["compiled"], f"{EXTENSION_FIELD}.turns[{i}].rubric[{j}].compiled")
        items.append(item)
    return items


COMPILED_STATES = ("suggested", "accepted", "edited", "removed")


def _compiled(item: ParsedRubric, raw: Any, where: str) -> None:
    """Restore a compiled suggestion from our extension (``{"check", "rule", "version", "confidence",
    "note", "state"}``), validated like the model does."""
    _expect(raw, "object", where)
    check = raw.get("check")
    try:
        validate_rubric_check(check)
    except ValueError as exc:
        raise PabRecordError(f"{where}.check", str(exc)) from None
    state = _choice(raw.get("state"), COMPILED_STATES, f"{where}.state")
    if check is None and state != "removed":
        raise PabRecordError(f"{where}.check", f"missing for state {state!r}")
    confidence = raw.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, int | float)):
        raise PabRecordError(f"{where}.confidence", f"expected a number or null, got {_type_name(confidence)}")
    item.compiled_check = check
    item.compiled_state = state
    item.compiled_confidence = confidence
    for name in ("rule", "version", "note"):
        value = _expect(raw.get(name, ""), "string", f"{where}.{name}")
        setattr(item, f"compiled_{name}", value)


def _extension(rec: _Record, n: int) -> dict[str, Any]:
    ext = rec.get(EXTENSION_FIELD, "object", optional=True) or {}
    if "turns" in ext:
        turns = _expect(ext["turns"], "list", f"{EXTENSION_FIELD}.turns")
        if len(turns) != n:
            raise PabRecordError(f"{EXTENSION_FIELD}.turns", f"{len(turns)} entries, expected {n} (one per turn)")
        for i, t in enumerate(turns):
            _expect(t, "object", f"{EXTENSION_FIELD}.turns[{i}]")
            _expect(t.get("derivations", []), "list", f"{EXTENSION_FIELD}.turns[{i}].derivations")
    _expect(ext.get("patient_memory", {}), "object", f"{EXTENSION_FIELD}.patient_memory")
    return ext


def _schemas(tools: list[Any] | None, name: str) -> list[Any] | None:
    """Tool schemas (``tools``, ``tools_en``, ``tools_zh``): a list of objects, kept as given."""
    for k, schema in enumerate(tools or []):
        _expect(schema, "object", f"{name}[{k}]")
    return tools


def _db_int(rec: _Record, name: str) -> int:
    value = rec.get(name, "integer")
    if not -(2**31) <= value < 2**31:
        raise PabRecordError(name, f"{value} is out of range (32-bit integer)")
    return value


def _persona(rec: _Record) -> dict[str, Any]:
    persona = rec.get("persona_config", "object")
    for key, allowed in PERSONA_VALUES.items():
        if key in persona:
            _choice(persona[key], allowed, f"persona_config.{key}")
    return persona


def parse_record(raw: Any, *, texts: dict[str, str] | None = None) -> ParsedRecord:
    """Validate one decoded JSON line; raises :class:`PabRecordError` naming the first bad field.

    ``texts``: the line's JSON text of unknown top-level fields (:attr:`~scenarios.pab.reader.Line.texts`),
    kept so that the export writes them byte for byte.
    """
    if not isinstance(raw, dict):
        raise PabRecordError("(record)", f"expected a JSON object, got {_type_name(raw)}")
    rec = _Record(raw)
    if bad := next((k for k, v in raw.items() if has_nul(k) or has_nul(v)), None):
        raise PabRecordError(bad, "contains a NUL character (\\u0000), which the database cannot store")
    record_id = rec.get("id", "string")
    session_id = rec.get("session_id", "string")
    for name, value in (("id", record_id), ("session_id", session_id)):
        if not value.strip():
            raise PabRecordError(name, "empty")
    tier = rec.get("difficulty_level", "integer")
    if tier not in (1, 2, 3):
        raise PabRecordError("difficulty_level", f"{tier} is not a tier (expected 1, 2 or 3)")
    generated_raw = rec.get("generated_at", "string")
    generated_at = parse_datetime(generated_raw)
    tools = _schemas(rec.primary("tools", "list"), "tools" if "tools" in raw else "tools_en")
    _schemas(raw.get("tools_en"), "tools_en")  # its type was checked with the primary
    fields: dict[str, Any] = {
        "record_id": record_id,
        "session_id": session_id,
        "subject_id": _db_int(rec, "subject_id"),
        "hadm_id": _db_int(rec, "hadm_id"),
        "current_date": iso_date(rec.get("current_date", "string")),
        "env_info": rec.get("env_info", "string"),
        "scenario": _choice(rec.get("clinical_scenario", "string"), tuple(Scenario.values), "clinical_scenario"),
        "clinical_task_domain": rec.get("clinical_task_domain", "string"),
        "tier": tier,
        "tool_set": rec.get("tool_set", "string"),
        "sequence_idx": _db_int(rec, "sequence_idx"),
        "tools": tools,
        "tools_zh": _schemas(rec.get("tools_zh", "list", optional=True), "tools_zh"),
        "dep_graph": rec.get("dep_graph", "object"),
        "session_plan": rec.get("session_plan", "object"),
        "persona": _persona(rec),
        "patient_agent_annotations": rec.get("patient_agent_annotations", "list", optional=True) or [],
        "generated_at": generated_at,
    }
    n = len(rec.primary("tasks", "list"))
    if n == 0:
        raise PabRecordError("tasks", "no turn")
    lists = _per_turn(rec, n)
    ext = _extension(rec, n)
    fields["patient_memory"] = ext.get("patient_memory", {})
    turns = [_turn(lists, i, (ext.get("turns") or [None] * n)[i]) for i in range(n)]
    fields["import_meta"] = _conversations(rec, turns, n)
    verbatim = fields["import_meta"].setdefault("verbatim", {})
    for alias, primary in ALIASES.items():
        if alias in raw and (kept := keep(original=raw[alias], ours=raw.get(primary, raw[alias]))):
            verbatim[alias] = kept
    if kept := keep(original=generated_raw, ours=render_datetime(generated_at)):
        verbatim["generated_at"] = kept
    for name, column in INTEGER_FIELDS.items():
        if kept := keep(original=raw[name], ours=fields[column]):
            verbatim[name] = kept  # 22444183.0 stays 22444183.0
    if not verbatim:
        del fields["import_meta"]["verbatim"]
    fields["extra"] = {k: v for k, v in raw.items() if k not in KNOWN_FIELDS}
    # Every field's imported text (key order, spacing, escapes, 5.0): written back while its value is unchanged.
    spelling = {k: e for k, t in (texts or {}).items() if k in raw and (e := keep_spelling(value=raw[k], text=t))}
    if spelling:
        fields["import_meta"]["spelling"] = spelling
    fields["import_meta"]["order"] = list(raw)
    return ParsedRecord(fields=fields, turns=turns)


def _turn(lists: dict[str, list[Any]], i: int, ext_turn: dict[str, Any] | None) -> ParsedTurn:
    label = _choice(lists["task_types"][i], tuple(TASK_TYPE_LABELS), f"task_types[{i}]")
    if "task_sequence" in lists:
        _choice(lists["task_sequence"][i], tuple(TASK_TYPE_LABELS), f"task_sequence[{i}]")
    texts = {}
    for column, name in (
        ("request_implicit_en", "tasks"),
        ("request_explicit_en", "tasks_explicit"),
        ("request_implicit_zh", "tasks_zh"),
        ("request_explicit_zh", "tasks_zh_explicit"),
    ):
        texts[column] = _expect(lists[name][i], "string", f"{name}[{i}]")
    for alias in ("tasks_en", "tasks_en_explicit"):
        if alias in lists:
            _expect(lists[alias][i], "string", f"{alias}[{i}]")
    fields = {
        **texts,
        "task_type": TASK_TYPE_LABELS[label],
        "is_implicit": _expect(lists["turn_types"][i], "boolean", f"turn_types[{i}]"),
        "subtype": _choice(lists["turn_subtypes"][i], tuple(Subtype.values), f"turn_subtypes[{i}]", nullable=True),
        "tool_source": _choice(lists["tool_sources"][i], tuple(ToolSource.values), f"tool_sources[{i}]"),
        "workup_mode": _choice(lists["workup_modes"][i], tuple(WorkupMode.values), f"workup_modes[{i}]", nullable=True),
        "derivations": (ext_turn or {}).get("derivations", []),
        "extra": {},
    }
    if "answer_list_zh" in lists:
        parse_steps(lists["answer_list_zh"][i], f"answer_list_zh[{i}]")  # validated; stored as given
        fields["extra"][ANSWER_LIST_ZH] = lists["answer_list_zh"][i]
    return ParsedTurn(
        fields=fields,
        steps=parse_steps(lists["answer_list"][i], f"answer_list[{i}]"),
        rubric=_rubric(lists["rubrics"][i], lists["rubrics_zh"][i], i, ext_turn),
    )


def _conversations(rec: _Record, turns: list[ParsedTurn], n: int) -> dict[str, Any]:
    """Answers from the gold conversations, plus what must be kept verbatim to export them unchanged."""
    meta: dict[str, Any] = {}
    verbatim: dict[str, Any] = {}
    unseparated: dict[str, str] = {}
    lists = {"messages": rec.primary("messages", "list"), "messages_zh": rec.get("messages_zh", "list")}
    splits = {name: conversation.split(messages=m, n_turns=n, field=name) for name, m in lists.items()}
    # One separator for both languages (the export writes it in both): the first one found, English first.
    session_separator = next((sep for _, sep in splits.values() if sep is not None), conversation.DEFAULT_SEPARATOR)
    if session_separator != conversation.DEFAULT_SEPARATOR:
        meta["separator"] = session_separator
    for name, lang in (("messages", "en"), ("messages_zh", "zh")):
        segments, separator = splits[name]
        for i, (turn, segment) in enumerate(zip(turns, segments, strict=True)):
            answer = conversation.answer_of(segment=segment, field=name, turn=i)
            turn.fields[f"answer_{lang}"] = answer
            ours = conversation.rebuild_segment(request=turn.fields[f"request_implicit_{lang}"], answer=answer)
            if kept := keep(original=segment, ours=ours):
                turn.fields["extra"].setdefault("pab_messages", {})[lang] = kept
        assembled = conversation.assemble(segments=segments, separator=session_separator)
        if separator is None:
            # Pairs without separators: the list is its segments, so a flag is enough to write it
            # back the same way (while the conversation, with separators, still has this digest).
            unseparated[name] = digest(assembled)
        elif kept := keep(original=lists[name], ours=assembled):
            verbatim[name] = kept
    if verbatim:
        meta["verbatim"] = verbatim
    if unseparated:
        meta["unseparated"] = unseparated
    return meta
