"""Flat rows: one per turn and language, derived from a frozen PhysAssistBench record.

Columns (flat JSONL and Parquet share them; the gold tool calls are one JSON text, ``gold_calls_json``
= ``[{"tool", "arguments"}, ...]``, because tool arguments have no fixed shape and a column type
inferred from them, e.g. by ``pyarrow.json``, would add or drop keys)::

    record_id, session_id, turn_index, language, scenario, tier, clinical_task_domain, subject_id,
    hadm_id, current_date, source, task_type (IL|DG|CR|WU), is_implicit, subtype, tool_source,
    workup_mode, request (the form the assistant is given), request_explicit, answer,
    rubric [{text, is_safety}], gold_calls_json, turn_version, reviewers, adjudicator
"""

from __future__ import annotations

from typing import Any

import msgspec

from scenarios.pab import conversation
from scenarios.pab.layout import ALIASES, TASK_TYPE_LABELS

COLUMNS = (
    "record_id",
    "session_id",
    "turn_index",
    "language",
    "scenario",
    "tier",
    "clinical_task_domain",
    "subject_id",
    "hadm_id",
    "current_date",
    "source",
    "task_type",
    "is_implicit",
    "subtype",
    "tool_source",
    "workup_mode",
    "request",
    "request_explicit",
    "answer",
    "rubric",
    "gold_calls_json",
    "turn_version",
    "reviewers",
    "adjudicator",
)
_PER_LANGUAGE = {
    # language → (implicit requests, explicit requests, conversation, rubric texts)
    "en": ("tasks", "tasks_explicit", "messages", "rubrics"),
    "zh": ("tasks_zh", "tasks_zh_explicit", "messages_zh", "rubrics_zh"),
}


def field_of(record: dict[str, Any], name: str) -> Any:
    """A field, falling back to its English duplicate (our writer always writes both)."""
    if name in record:
        return record[name]
    alias = next((a for a, primary in ALIASES.items() if primary == name and a in record), None)
    if alias is None:
        raise KeyError(name)
    return record[alias]


def answers(*, record: dict[str, Any], language: str) -> list[str]:
    """Each turn's gold answer: the last assistant text of its conversation segment (as import reads it)."""
    field = _PER_LANGUAGE[language][2]
    return _answers(field_of(record, field), len(record["turn_types"]), field)


# msgspec: the same JSON as the json module (compact, UTF-8, Chinese as text), several times faster.
_ENCODER = msgspec.json.Encoder()
_SORTED = msgspec.json.Encoder(order="sorted")


class _Action(msgspec.Struct):
    name: str
    arguments: Any = None


class _Step(msgspec.Struct):
    action: _Action


class _RubricMeta(msgspec.Struct):
    is_safety: bool = False


class _ExtTurn(msgspec.Struct):
    rubric: list[_RubricMeta] = msgspec.field(default_factory=list)


class _Extension(msgspec.Struct):
    turns: list[_ExtTurn] = msgspec.field(default_factory=list)


class FlatSource(msgspec.Struct):
    """The parts of a frozen PAB record the flat rows read. Decoding into it skips everything else
    (FHIR observations, plans, tools) without building Python objects for it: the export's hot path."""

    id: str
    session_id: str
    # The release's pandas-written records spell integers as 22444183.0 (imported and exported as spelled).
    subject_id: int | float
    hadm_id: int | float
    current_date: str
    clinical_scenario: str
    clinical_task_domain: str
    difficulty_level: int | float
    tasks: list[str]
    tasks_explicit: list[str]
    tasks_zh: list[str]
    tasks_zh_explicit: list[str]
    messages: list[Any]
    messages_zh: list[Any]
    answer_list: list[list[_Step]]
    turn_types: list[bool]
    task_types: list[str]
    turn_subtypes: list[str | None]
    tool_sources: list[str]
    workup_modes: list[str | None]
    rubrics: list[list[str]]
    rubrics_zh: list[list[str]]
    physreview: _Extension | None = None


decode_flat_source = msgspec.json.Decoder(FlatSource).decode


def flat_source_json(record_json: str) -> str:
    """The projection frozen next to the PAB line: the same JSON restricted to :class:`FlatSource`."""
    return _ENCODER.encode(decode_flat_source(record_json)).decode("utf-8")


def _answers(messages: list[Any], n: int, field: str) -> list[str]:
    segments, _ = conversation.split(messages=messages, n_turns=n, field=field)
    return [conversation.answer_of(segment=s, field=field, turn=i) for i, s in enumerate(segments)]


def flat_rows(*, record: FlatSource, source: str, review: dict[str, Any], languages: list[str]) -> list[dict[str, Any]]:
    """Rows in turn order, then ``languages`` order (``record`` from :func:`decode_flat_source`)."""
    n = len(record.turn_types)
    ext_turns = record.physreview.turns if record.physreview else []
    review_turns = {t["index"]: t for t in review.get("turns", [])}
    per_lang = {
        "en": (record.tasks, record.tasks_explicit, record.rubrics, "messages"),
        "zh": (record.tasks_zh, record.tasks_zh_explicit, record.rubrics_zh, "messages_zh"),
    }
    texts_by_lang = {
        lang: (*per_lang[lang][:3], _answers(getattr(record, per_lang[lang][3]), n, per_lang[lang][3]))
        for lang in languages
    }
    session = {
        "record_id": record.id,
        "session_id": record.session_id,
    }
    rows = []
    for i in range(n):
        facts = review_turns.get(i, {})
        safety = [r.is_safety for r in ext_turns[i].rubric] if i < len(ext_turns) else []
        calls = gold_calls_json(
            [{"tool": s.action.name, "arguments": s.action.arguments} for s in record.answer_list[i]]
        )
        for lang in languages:
            implicit, explicit, rubrics, answers_ = texts_by_lang[lang]
            rows.append(
                {
                    **session,
                    "turn_index": i,
                    "language": lang,
                    "scenario": record.clinical_scenario,
                    "tier": int(record.difficulty_level),
                    "clinical_task_domain": record.clinical_task_domain,
                    "subject_id": int(record.subject_id),
                    "hadm_id": int(record.hadm_id),
                    "current_date": record.current_date,
                    "source": source,
                    "task_type": TASK_TYPE_LABELS[record.task_types[i]],
                    "is_implicit": record.turn_types[i],
                    "subtype": record.turn_subtypes[i],
                    "tool_source": record.tool_sources[i],
                    "workup_mode": record.workup_modes[i],
                    "request": implicit[i],
                    "request_explicit": explicit[i],
                    "answer": answers_[i],
                    "rubric": [
                        {"text": text, "is_safety": safety[j] if j < len(safety) else False}
                        for j, text in enumerate(rubrics[i])
                    ],
                    "gold_calls_json": calls,
                    "turn_version": facts.get("version"),
                    "reviewers": facts.get("reviewers", []),
                    "adjudicator": facts.get("adjudicator"),
                }
            )
    return rows


def gold_calls_json(calls: list[dict[str, Any]]) -> str:
    return _SORTED.encode(calls).decode("utf-8")


def encode_row(row: dict[str, Any]) -> bytes:
    """One JSONL line (no newline), UTF-8: columns in :data:`COLUMNS` order, compact, Chinese as text."""
    return _ENCODER.encode(row)


# The export's fast path: the same rows as msgspec structs, built once per session and shared by the
# JSONL encoder (fields in COLUMNS order encode exactly as the dicts above do) and the Parquet columns.
class RubricCell(msgspec.Struct, gc=False):
    text: str
    is_safety: bool


class FlatRow(msgspec.Struct, gc=False):
    record_id: str
    session_id: str
    turn_index: int
    language: str
    scenario: str
    tier: int
    clinical_task_domain: str
    # The release's pandas-written records spell integers as 22444183.0 (imported and exported as spelled).
    subject_id: int | float
    hadm_id: int | float
    current_date: str
    source: str
    task_type: str
    is_implicit: bool
    subtype: str | None
    tool_source: str
    workup_mode: str | None
    request: str
    request_explicit: str
    answer: str
    rubric: list[RubricCell]
    gold_calls_json: str
    turn_version: int | None
    reviewers: list[str]
    adjudicator: str | None


assert FlatRow.__struct_fields__ == COLUMNS


def flat_row_structs(*, record: FlatSource, source: str, review: dict[str, Any], languages: list[str]) -> list[FlatRow]:
    """:func:`flat_rows` as :class:`FlatRow` structs (same values, same order), with less per-row work."""
    n = len(record.turn_types)
    ext_turns = record.physreview.turns if record.physreview else []
    review_turns = {t["index"]: t for t in review.get("turns", ())}
    per_lang = []
    for lang in languages:
        implicit, explicit, rubrics, field = (
            (record.tasks, record.tasks_explicit, record.rubrics, "messages")
            if lang == "en"
            else (record.tasks_zh, record.tasks_zh_explicit, record.rubrics_zh, "messages_zh")
        )
        per_lang.append((lang, implicit, explicit, rubrics, _answers(getattr(record, field), n, field)))
    record_id, session_id = record.id, record.session_id
    scenario, tier, domain = record.clinical_scenario, record.difficulty_level, record.clinical_task_domain
    subject_id, hadm_id, current_date = record.subject_id, record.hadm_id, record.current_date
    rows = []
    for i in range(n):
        facts = review_turns.get(i, {})
        safety = [r.is_safety for r in ext_turns[i].rubric] if i < len(ext_turns) else []
        calls = _SORTED.encode(
            [{"tool": s.action.name, "arguments": s.action.arguments} for s in record.answer_list[i]]
        ).decode("utf-8")
        task_type = TASK_TYPE_LABELS[record.task_types[i]]
        is_implicit, subtype = record.turn_types[i], record.turn_subtypes[i]
        tool_source, workup_mode = record.tool_sources[i], record.workup_modes[i]
        version, reviewers, adjudicator = facts.get("version"), facts.get("reviewers", []), facts.get("adjudicator")
        for lang, implicit, explicit, rubrics, answers_ in per_lang:
            texts = rubrics[i]
            flags = safety + [False] * (len(texts) - len(safety)) if len(safety) < len(texts) else safety
            rows.append(
                FlatRow(
                    record_id,
                    session_id,
                    i,
                    lang,
                    scenario,
                    tier,
                    domain,
                    subject_id,
                    hadm_id,
                    current_date,
                    source,
                    task_type,
                    is_implicit,
                    subtype,
                    tool_source,
                    workup_mode,
                    implicit[i],
                    explicit[i],
                    answers_[i],
                    [RubricCell(t, f) for t, f in zip(texts, flags, strict=False)],
                    calls,
                    version,
                    reviewers,
                    adjudicator,
                )
            )
    return rows


def encode_row_lines(rows: list[FlatRow]) -> bytes:
    """JSONL of the rows: each row as :func:`encode_row` writes it, then a newline."""
    return _ENCODER.encode_lines(rows)
