"""Deterministic quality gates over a session draft: each returns the failures it finds.

A failure names the gate, the turn and what is wrong, so a rejected session shows its reasons.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from ehr.fhir import REGISTRY, TOOL_NAMES
from ehr.fhir.errors import ToolError
from ehr.fhir.params import clean_arguments
from scenarios.gate_messages import gate_message, where
from scenarios.generation.gates_content import CONTENT_GATES
from scenarios.generation.numbers import as_decimal, numbers, numbers_in, units
from scenarios.generation.planner import ARCS
from scenarios.generation.templates import AE_MARKERS_EN, AE_MARKERS_ZH, NA_PRONOUNS_EN, NA_PRONOUNS_ZH, PE_MAX_WORDS
from scenarios.generation.types import RUBRIC_COUNTS, SUBTYPES, GateFailure, SessionDraft, TurnDraft
from scenarios.rubric_checks import validate_rubric_check, write_call_contract_problems

L2_KINDS = {"cr_trend", "cr_crcl", "cr_threshold"}
L3_KINDS = {"cr_interaction", "cr_renal_dosing"}
DATE_KEYS = {
    "effectiveDateTime",
    "performedDateTime",
    "authoredOn",
    "date",
    "recordedDate",
    "created",
    "issued",
    "start",
    "end",
    "charttime",
}


def _kind(tool: str) -> str:
    return REGISTRY[tool].kind if tool in REGISTRY else "unknown"


def _calls(turn: TurnDraft) -> list:
    return [s for s in turn.steps if s.tool != "prepare_to_answer"]


def gate_tool_results(draft: SessionDraft) -> Iterator[GateFailure]:
    for turn in draft.turns:
        for s in _calls(turn):
            obs = s.observation
            if isinstance(obs, dict) and "error" in obs:
                yield GateFailure(
                    "tool_result", turn.index, gate_message("tool_error", idx=s.idx, tool=s.tool, error=obs["error"])
                )
            elif _kind(s.tool) == "ehr" and isinstance(obs, dict) and obs.get("resourceType") == "Bundle":
                if not obs.get("total") or not obs.get("entry"):
                    yield GateFailure("tool_result", turn.index, gate_message("empty_bundle", idx=s.idx, tool=s.tool))
            elif _kind(s.tool) == "ehr" and not obs:
                yield GateFailure("tool_result", turn.index, gate_message("returned_nothing", idx=s.idx, tool=s.tool))


def gate_tool_counts(draft: SessionDraft) -> Iterator[GateFailure]:
    for turn in draft.turns:
        calls = _calls(turn)
        kinds = [_kind(s.tool) for s in calls]
        tt = turn.task_type
        if not turn.steps or turn.steps[-1].tool != "prepare_to_answer":
            yield GateFailure("tool_count", turn.index, gate_message("last_step"))
        if tt == "IL" and (len(calls) != 1 or kinds != ["ehr"]):
            yield GateFailure("tool_count", turn.index, gate_message("il_calls", kinds=kinds))
        elif tt == "DG" and not 2 <= len(calls) <= 4:
            yield GateFailure("tool_count", turn.index, gate_message("dg_calls", count=len(calls)))
        elif tt == "CR" and "ehr" not in kinds:
            yield GateFailure("tool_count", turn.index, gate_message("cr_calls"))
        elif tt == "WU" and kinds != ["write"]:
            yield GateFailure("tool_count", turn.index, gate_message("wu_calls", kinds=kinds))
        if tt != "WU" and "write" in kinds:
            yield GateFailure("tool_count", turn.index, gate_message("must_not_write", task_type=tt))
        if "unknown" in kinds:
            yield GateFailure("tool_names", turn.index, gate_message("unknown_tool", tools=[s.tool for s in calls]))


def _grounding(draft: SessionDraft, upto: int) -> set[Decimal]:
    pool = numbers(draft.env_info)
    for turn in draft.turns[: upto + 1]:
        for text in (turn.request_explicit_en, turn.request_implicit_en):
            pool |= numbers(text)
        for s in _calls(turn):
            pool |= numbers_in(s.arguments) | numbers_in(s.observation)
        for d in turn.derivations:
            for v in (d.result, *d.constants.values()):
                if (dec := as_decimal(v)) is not None:
                    pool.add(dec)
    return pool


def gate_numbers(draft: SessionDraft) -> Iterator[GateFailure]:
    """Every number of an answer or rubric item is read from the record/requests or declared as derived."""
    for turn in draft.turns:
        pool = _grounding(draft, turn.index)
        texts = [(where("answer"), turn.answer_en)]
        texts += [(where("rubric", n=i + 1), r.text_en) for i, r in enumerate(turn.rubric)]
        for field, text in texts:
            if missing := sorted(numbers(text) - pool):
                yield GateFailure(
                    "numbers", turn.index, gate_message("ungrounded", where=field, numbers=", ".join(map(str, missing)))
                )
        for i, r in enumerate(turn.rubric):
            if r.check and r.check.get("kind") == "value_unit":
                dec = as_decimal(r.check.get("value"))
                if dec is None or dec not in pool:
                    yield GateFailure(
                        "numbers",
                        turn.index,
                        gate_message("checked_value", where=where("rubric", n=i + 1), value=r.check.get("value")),
                    )


def gate_rubric(draft: SessionDraft) -> Iterator[GateFailure]:
    for turn in draft.turns:
        low, high = RUBRIC_COUNTS[turn.task_type]
        if not low <= len(turn.rubric) <= high:
            yield GateFailure(
                "rubric_count",
                turn.index,
                gate_message("rubric_count", task_type=turn.task_type, low=low, high=high, count=len(turn.rubric)),
            )
        for i, r in enumerate(turn.rubric):
            if not r.text_en.strip() or not r.text_zh.strip():
                yield GateFailure("rubric", turn.index, gate_message("no_text", where=where("rubric", n=i + 1)))
            try:
                validate_rubric_check(r.check)
            except ValueError as exc:
                yield GateFailure(
                    "rubric", turn.index, gate_message("detail", where=where("rubric", n=i + 1), detail=exc)
                )
                continue
            for problem in write_call_contract_problems(r.check):
                yield GateFailure(
                    "tool_contract", turn.index, gate_message("detail", where=where("rubric", n=i + 1), detail=problem)
                )
        if turn.task_type == "WU" and not any((r.check or {}).get("kind") == "write_call" for r in turn.rubric):
            yield GateFailure("rubric", turn.index, gate_message("wu_rubric"))


def _pairs(turn: TurnDraft) -> Iterator[tuple[str, str, str]]:
    yield where("explicit"), turn.request_explicit_en, turn.request_explicit_zh
    yield where("implicit"), turn.request_implicit_en, turn.request_implicit_zh
    yield where("answer"), turn.answer_en, turn.answer_zh
    for i, r in enumerate(turn.rubric):
        yield where("rubric", n=i + 1), r.text_en, r.text_zh


def gate_translation(draft: SessionDraft) -> Iterator[GateFailure]:
    """Numbers, units and tool names of each English text survive in its Chinese counterpart."""
    for turn in draft.turns:
        for field, en, zh_text in _pairs(turn):
            if not zh_text.strip():
                yield GateFailure("translation", turn.index, gate_message("zh_missing", where=field))
                continue
            if missing := sorted(numbers(en) - numbers(zh_text)):
                yield GateFailure(
                    "translation",
                    turn.index,
                    gate_message("zh_numbers", where=field, numbers=", ".join(map(str, missing))),
                )
            if missing_u := sorted(units(en) - units(zh_text)):
                yield GateFailure(
                    "translation", turn.index, gate_message("zh_units", where=field, units=", ".join(missing_u))
                )
            if lost := [n for n in TOOL_NAMES if n in en and n not in zh_text]:
                yield GateFailure(
                    "tool_names", turn.index, gate_message("tool_name_lost", where=field, tools=", ".join(lost))
                )
        for i, r in enumerate(turn.rubric):
            if r.check and r.check.get("kind") == "write_call" and r.check.get("tool") not in TOOL_NAMES:
                yield GateFailure(
                    "tool_names",
                    turn.index,
                    gate_message("unknown_write_tool", where=where("rubric", n=i + 1), tool=r.check.get("tool")),
                )


def _words(text: str) -> list[str]:
    return [w.strip("?.,!:;").lower() for w in text.split()]


def gate_arc(draft: SessionDraft) -> Iterator[GateFailure]:
    types = tuple(t.task_type for t in draft.turns)
    if (
        len(types) != 4
        or types[0] != "IL"
        or any(t not in ("IL", "DG", "CR") for t in types[1:3])
        or types[3] not in ("DG", "CR", "WU")
    ):
        yield GateFailure("arc", None, gate_message("arc_protocol", arc=types))
    if not 0 <= draft.sequence_idx < len(ARCS) or ARCS[draft.sequence_idx] != types:
        yield GateFailure("arc", None, gate_message("arc_sequence", sequence=draft.sequence_idx, arc=types))
    seen: set[str] = set()
    for turn in draft.turns:
        yield from _subtype_failures(turn, seen)
        yield from _source_failures(turn)
        seen |= set(turn.entities)


def _subtype_failures(turn: TurnDraft, seen: set[str]) -> Iterator[GateFailure]:
    if turn.index == 0:
        if turn.subtype is not None or turn.is_implicit:
            yield GateFailure("subtype", 0, gate_message("turn0_explicit"))
        return
    if turn.subtype not in SUBTYPES or not turn.is_implicit:
        yield GateFailure("subtype", turn.index, gate_message("needs_subtype", subtype=turn.subtype or "none"))
        return
    if turn.request_implicit_en == turn.request_explicit_en:
        yield GateFailure("subtype", turn.index, gate_message("implicit_equals"))
    words = _words(turn.request_implicit_en)
    if turn.subtype == "NA":
        if turn.entity not in seen:
            yield GateFailure("subtype", turn.index, gate_message("na_unseen", entity=turn.entity))
        if not set(words) & set(NA_PRONOUNS_EN) or not any(p in turn.request_implicit_zh for p in NA_PRONOUNS_ZH):
            yield GateFailure("subtype", turn.index, gate_message("na_pronoun"))
    elif turn.subtype == "PE" and len(words) > PE_MAX_WORDS:
        yield GateFailure("subtype", turn.index, gate_message("pe_long", count=len(words)))
    elif turn.subtype == "AE" and (
        not turn.request_implicit_en.startswith(AE_MARKERS_EN) or not turn.request_implicit_zh.startswith(AE_MARKERS_ZH)
    ):
        yield GateFailure("subtype", turn.index, gate_message("ae_marker"))


def _source_failures(turn: TurnDraft) -> Iterator[GateFailure]:
    kinds = {_kind(s.tool) for s in _calls(turn)}
    expected = {"ehr": {"ehr"}, "patient": {"patient"}, "write": {"write"}, "mixed": {"ehr", "patient"}}
    if kinds != expected.get(turn.tool_source):
        yield GateFailure(
            "tool_source", turn.index, gate_message("tool_source", source=turn.tool_source, kinds=sorted(kinds))
        )
    if turn.task_type == "DG":
        adaptive = any(s.dependency_list for s in _calls(turn))
        if turn.workup_mode not in ("parallel", "adaptive") or adaptive != (turn.workup_mode == "adaptive"):
            yield GateFailure("workup_mode", turn.index, gate_message("workup_mode", mode=turn.workup_mode))


def gate_tier(draft: SessionDraft) -> Iterator[GateFailure]:
    kinds = {t.kind for t in draft.turns}
    if draft.tier == 2 and not kinds & L2_KINDS:
        yield GateFailure("tier", None, gate_message("l2_kind"))
    if draft.tier == 3:
        if not kinds & L3_KINDS:
            yield GateFailure("tier", None, gate_message("l3_kind"))
        resource_types = {s.tool.split(".")[0] for t in draft.turns for s in _calls(t) if _kind(s.tool) == "ehr"}
        if len(resource_types) < 3:
            yield GateFailure("tier", None, gate_message("l3_resources", types=sorted(resource_types)))


def _dates(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in DATE_KEYS and isinstance(v, str) and len(v) >= 10:
                yield v[:10]
            else:
                yield from _dates(v)
    elif isinstance(value, list):
        for v in value:
            yield from _dates(v)


def gate_date_cutoff(draft: SessionDraft) -> Iterator[GateFailure]:
    """No EHR observation shows a time on or after the current date (the cutoff rule of ``ehr.fhir.context``:
    visible iff before 00:00 of ``current_date``). Simulated writes are dated today by design."""
    today = dt.date.fromisoformat(draft.current_date).isoformat()
    for turn in draft.turns:
        for s in _calls(turn):
            if _kind(s.tool) != "ehr":
                continue
            if late := sorted(d for d in _dates(s.observation) if d >= today):
                yield GateFailure(
                    "date_cutoff",
                    turn.index,
                    gate_message(
                        "date_cutoff", where=where("step", idx=s.idx, tool=s.tool), date=late[-1], today=today
                    ),
                )


def gate_tool_contract(draft: SessionDraft) -> Iterator[GateFailure]:
    """Every gold call (``prepare_to_answer`` too) uses only the released contract's parameter names with
    valid values, and its result carries no ``warnings``: the official tooling knows no alias."""
    for turn in draft.turns:
        for s in turn.steps:
            if s.tool not in REGISTRY:
                continue  # gate_tool_counts names it
            tool = REGISTRY[s.tool]
            step = where("step", idx=s.idx, tool=s.tool)
            if unknown := sorted(set(s.arguments) - {p.name for p in tool.params}):
                yield GateFailure(
                    "tool_contract", turn.index, gate_message("not_contract", where=step, names=", ".join(unknown))
                )
                continue
            try:
                clean_arguments(tool=tool, arguments=s.arguments, filled={})
            except ToolError as exc:
                yield GateFailure("tool_contract", turn.index, gate_message("detail", where=step, detail=exc))
            if isinstance(s.observation, dict) and s.observation.get("warnings"):
                yield GateFailure(
                    "tool_contract",
                    turn.index,
                    gate_message("warned", where=step, warnings="; ".join(s.observation["warnings"])),
                )


GATES = (
    gate_tool_results,
    gate_tool_counts,
    gate_numbers,
    gate_rubric,
    gate_translation,
    gate_arc,
    gate_tier,
    gate_date_cutoff,
    gate_tool_contract,
    *CONTENT_GATES,  # placeholders, untranslated English, machine strings, answers failing their own rubric
)


def check_session(draft: SessionDraft) -> list[GateFailure]:
    """All gate failures of a draft (empty list: the draft passes)."""
    return [failure for gate in GATES for failure in gate(draft)]
