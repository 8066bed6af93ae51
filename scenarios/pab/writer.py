"""A session (with turns, steps and rubric items loaded) → one PhysAssistBench JSON line.

Key order: an imported record's own order; otherwise (and for fields it lacked) the format's fields in
:data:`~scenarios.pab.layout.FIELD_ORDER`, then unknown fields sorted by name; then ``physreview``.
A field whose value is unchanged since import is written with its imported text (nested key order,
spacing, escapes, ``5.0``), so an unedited release line comes back byte for byte (plus ``physreview``
unless left out). Other values have sorted nested keys (PostgreSQL's jsonb does not keep key order, so
sorting is what makes the output identical on both databases).

``physreview`` carries what PAB lacks, for our own import to restore::

    {"format": 1, "patient_memory": {...},
     "turns": [{"derivations": [...], "rubric": [{"is_safety": b, "safety_inferred": b, "check": {...}|null,
                                                  "compiled": {...}}]}]}

``compiled`` (only on items the rubric compiler made a suggestion for): ``check``, ``rule``, ``version``,
``confidence``, ``note`` and the reviewer's ``state`` (suggested / accepted / edited / removed).
"""

import json
from typing import Any

from scenarios.gold_answer import zh_steps_for_export
from scenarios.models import RubricItem, Session, TaskType, Turn
from scenarios.pab import conversation
from scenarios.pab.layout import (
    ALIASES,
    ANSWER_LIST_ZH,
    EXTENSION_FIELD,
    EXTENSION_FORMAT,
    FIELD_ORDER,
    INTEGER_FIELDS,
)
from scenarios.pab.values import render_datetime
from scenarios.pab.verbatim import canonical_text, choose, digest, spelled, spelling_of


def _step(step) -> dict[str, Any]:
    extra = step.extra or {}
    action = {"name": step.tool, "arguments": step.arguments, **extra.get("action", {})}
    return {
        **extra.get("step", {}),
        "action": action,
        "observation": step.observation,
        "dependency_list": step.dependency_list,
        "idx": extra.get("idx", step.idx),
    }


def _conversation(turns: list[Turn], *, lang: str, separator: str) -> list[Any]:
    segments = []
    for turn in turns:
        ours = conversation.rebuild_segment(
            request=getattr(turn, f"request_implicit_{lang}"), answer=getattr(turn, f"answer_{lang}")
        )
        stored = (turn.extra or {}).get("pab_messages", {}).get(lang)
        segments.append(choose(stored=stored, ours=ours))
    return conversation.assemble(segments=segments, separator=separator)


def _answer_list_zh(turns: list[Turn], steps: list[list[dict[str, Any]]]) -> list[Any] | None:
    """The imported answer_list_zh entries; a turn without one (added later) gets its answer_list steps
    with its Chinese answer as the prepare_to_answer observation (scenarios.gold_answer)."""
    if all((t.extra or {}).get(ANSWER_LIST_ZH) is None for t in turns):
        return None
    return [zh_steps_for_export(turn=t, en_steps=own) for t, own in zip(turns, steps, strict=True)]


def _rubric_meta(item: RubricItem) -> dict[str, Any]:
    meta = {"is_safety": item.is_safety, "safety_inferred": item.safety_inferred, "check": item.machine_check}
    if item.compiled_state:
        # Only items the compiler suggested something for: other records export exactly as before.
        meta["compiled"] = {
            "check": item.compiled_check,
            "rule": item.compiled_rule,
            "version": item.compiled_version,
            "confidence": item.compiled_confidence,
            "note": item.compiled_note,
            "state": item.compiled_state,
        }
    return meta


def session_to_record(session: Session, *, extension: bool = True) -> dict[str, Any]:
    """Uses ``session.turns.all()`` and each turn's ``steps`` / ``rubric_items`` (prefetch them).

    ``extension=False``: the release's fields only (no ``physreview`` member).
    """
    turns = sorted(session.turns.all(), key=lambda t: t.index)
    steps = [sorted(t.steps.all(), key=lambda s: s.idx) for t in turns]
    rubric = [sorted(t.rubric_items.all(), key=lambda r: r.idx) for t in turns]
    meta = session.import_meta or {}
    verbatim = meta.get("verbatim", {})
    separator = meta.get("separator", conversation.DEFAULT_SEPARATOR)
    labels = dict(TaskType.choices)
    answer_list = [[_step(s) for s in turn_steps] for turn_steps in steps]

    rec: dict[str, Any] = {
        "id": session.record_id,
        "session_id": session.session_id,
        "subject_id": session.subject_id,
        "hadm_id": session.hadm_id,
        "current_date": session.current_date.isoformat(),
        "env_info": session.env_info,
        "clinical_scenario": session.scenario,
        "clinical_task_domain": session.clinical_task_domain,
        "difficulty_level": session.tier,
        "tool_set": session.tool_set,
        "sequence_idx": session.sequence_idx,
        "tools": session.tools,
        "tasks": [t.request_implicit_en for t in turns],
        "tasks_explicit": [t.request_explicit_en for t in turns],
        "tasks_zh": [t.request_implicit_zh for t in turns],
        "tasks_zh_explicit": [t.request_explicit_zh for t in turns],
        "messages_zh": _conversation(turns, lang="zh", separator=separator),
        "answer_list": answer_list,
        "answer_list_zh": _answer_list_zh(turns, answer_list),
        "turn_types": [t.is_implicit for t in turns],
        "task_types": [labels[t.task_type] for t in turns],
        "turn_subtypes": [t.subtype for t in turns],
        "tool_sources": [t.tool_source for t in turns],
        "workup_modes": [t.workup_mode for t in turns],
        "dep_graph": session.dep_graph,
        "session_plan": session.session_plan,
        "rubrics": [[r.text_en for r in items] for items in rubric],
        "rubrics_zh": [[r.text_zh for r in items] for items in rubric],
        "persona_config": session.persona,
        "patient_agent_annotations": session.patient_agent_annotations,
    }
    rec["messages"] = _conversation(turns, lang="en", separator=separator)
    unseparated = meta.get("unseparated", {})
    for name in ("messages", "messages_zh"):
        if (basis := unseparated.get(name)) and basis == digest(rec[name]):
            rec[name] = conversation.without_separators(rec[name])  # imported that way, and unchanged since
        rec[name] = choose(stored=verbatim.get(name), ours=rec[name])
    for name, column in INTEGER_FIELDS.items():
        rec[name] = choose(stored=verbatim.get(name), ours=getattr(session, column))
    for alias, primary in ALIASES.items():
        rec[alias] = choose(stored=verbatim.get(alias), ours=rec[primary])
    rec["generated_at"] = choose(stored=verbatim.get("generated_at"), ours=render_datetime(session.generated_at))
    if session.tools_zh is not None:
        rec["tools_zh"] = session.tools_zh
    if rec["answer_list_zh"] is None:
        del rec["answer_list_zh"]

    spelling = meta.get("spelling", {})
    values = {**rec, **(session.extra or {})}
    # The imported order first (issue 33: a release line comes back byte for byte), then fields we add.
    # An imported record keeps exactly its fields: aliases it lacked are not added (our additions go to physreview).
    names = [n for n in meta.get("order", []) if n in values and n != EXTENSION_FIELD]
    if not names:
        names = [n for n in FIELD_ORDER if n in rec]
    names += [n for n in sorted(session.extra or {}) if n not in names]
    ordered = {name: spelled(stored=spelling.get(name), value=values[name]) for name in names}
    if not extension:
        return ordered
    ordered[EXTENSION_FIELD] = {
        "format": EXTENSION_FORMAT,
        "patient_memory": session.patient_memory,
        "turns": [
            {"derivations": turn.derivations, "rubric": [_rubric_meta(r) for r in items]}
            for turn, items in zip(turns, rubric, strict=True)
        ],
    }
    return ordered


def dumps_record(record: dict[str, Any]) -> str:
    """One line of JSON (no newline): top-level order as given, nested keys sorted, Chinese as text;
    a value that carries its imported text (:func:`~scenarios.pab.verbatim.spelled`) is written as that text."""
    parts = (
        json.dumps(key, ensure_ascii=False) + ": " + (spelling_of(value) or canonical_text(value))
        for key, value in record.items()
    )
    return "{" + ", ".join(parts) + "}"
