"""Content gates: what a physician would reject in a draft that every structural gate passes.

- ``placeholder``: a template hole left in a text ("States the Insulin dose ? ", ``None``, ``[]``,
  ``{...}``, ``{drug}``, ``TODO``, ``N/A``).
- ``untranslated``: English words in a Chinese text. Latin letters that Chinese clinical text normally
  keeps are allowed: drug names (the EHR glossary's and the names charted in the session's results),
  units, abbreviations (INR, PO, BID, NT-proBNP...), codes, formula eponyms, tool names, the literal
  parameters a write-call rubric item checks, and a record excerpt quoted as such (``原文：“...”``).
- ``machine_text``: a gold answer that reads like a log line (a tool name, a ``sim-...`` id, "Done with").
- ``self_rubric``: a gold answer that fails its own turn's ``term`` / ``value_unit`` checks, in English
  or in Chinese (the checks are those of :mod:`evaluation.judges.rules`, restated here because
  generation must not import evaluation; a test keeps the two in step).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ehr.fhir import TOOL_NAMES
from scenarios.gate_messages import gate_message, where
from scenarios.generation.latin import LATIN_WORD, strings, untranslated_words
from scenarios.generation.types import GateFailure, RubricItem, SessionDraft, TurnDraft
from scenarios.rubric_checks import validate_rubric_check
from scenarios.rubric_match import check_term, check_value_unit

# What each pattern finds, as a key of scenarios.gate_messages.FINDINGS.
_PLACEHOLDERS = (
    (re.compile(r"(?:^|(?<=[\s(（:：=,，]))[?？](?=\s|$|[)）,，;；.。])"), "lone_question_mark"),
    (re.compile(r"\bNone\b(?! of)"), "none"),
    (re.compile(r"\b(?:null|nan|NaN|undefined)\b"), "null"),
    (re.compile(r"\[\s*\]|\{\s*\}|\{\.\.\.\}|\(\s*\)|（\s*）"), "empty_bracket"),
    (re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}"), "template_field"),
    (re.compile(r"\b(?:TODO|TBD|FIXME|XXX)\b"), "todo"),
    (re.compile(r"(?<![A-Za-z])N/A(?![A-Za-z])"), "na"),
)
_MACHINE = (
    (re.compile(r"\bsim-[a-z]+-[0-9a-f]{6,}\b"), "sim_id"),
    (re.compile(r"\bDone with\b|\(simulated\b|模拟操作"), "log_phrase"),
)


def _charted_drug_words(draft: SessionDraft) -> set[str]:
    """Words of the medication names the session's gold calls returned (as charted, e.g. 'Neb Soln')."""
    words: set[str] = set()
    for turn in draft.turns:
        for step in turn.steps:
            if not step.tool.startswith("Medication") or not isinstance(step.observation, dict):
                continue
            for entry in step.observation.get("entry") or []:
                concept = (entry.get("resource") or {}).get("medicationCodeableConcept") or {}
                words |= {w.casefold() for text in strings(concept) for w in LATIN_WORD.findall(text)}
    return words


def _check_literals(item: RubricItem) -> set[str]:
    """The literal values a write-call item checks: a Chinese rubric may quote them as sent."""
    check = item.check or {}
    if check.get("kind") != "write_call":
        return set()
    literals = {str(check.get("tool", "")), *map(str, (check.get("params") or {}))}
    literals |= {str(v) for v in (check.get("params") or {}).values()}
    return {w.casefold() for text in literals for w in LATIN_WORD.findall(text)}


def _zh_texts(turn: TurnDraft) -> Iterator[tuple[str, str, set[str]]]:
    yield where("explicit"), turn.request_explicit_zh, set()
    yield where("implicit"), turn.request_implicit_zh, set()
    yield where("answer"), turn.answer_zh, set()
    for i, r in enumerate(turn.rubric):
        yield where("rubric", n=i + 1), r.text_zh, _check_literals(r)


def _all_texts(turn: TurnDraft) -> Iterator[tuple[str, str]]:
    yield where("explicit"), turn.request_explicit_en
    yield where("implicit"), turn.request_implicit_en
    yield where("explicit_zh"), turn.request_explicit_zh
    yield where("implicit_zh"), turn.request_implicit_zh
    yield where("answer"), turn.answer_en
    yield where("answer_zh"), turn.answer_zh
    for i, r in enumerate(turn.rubric):
        yield where("rubric", n=i + 1), r.text_en
        yield where("rubric_zh", n=i + 1), r.text_zh


def gate_placeholders(draft: SessionDraft) -> Iterator[GateFailure]:
    for turn in draft.turns:
        for field, text in _all_texts(turn):
            for pattern, what in _PLACEHOLDERS:
                if match := pattern.search(text):
                    snippet = text[max(0, match.start() - 30) : match.end() + 10].strip()
                    yield GateFailure(
                        "placeholder", turn.index, gate_message("placeholder", where=field, what=what, snippet=snippet)
                    )


def gate_untranslated(draft: SessionDraft) -> Iterator[GateFailure]:
    charted = _charted_drug_words(draft)
    for turn in draft.turns:
        for field, text, literals in _zh_texts(turn):
            if words := untranslated_words(text, allowed=charted | literals):
                message = gate_message("untranslated", where=field, words=" ".join(words))
                yield GateFailure("untranslated", turn.index, message)


def gate_machine_text(draft: SessionDraft) -> Iterator[GateFailure]:
    for turn in draft.turns:
        for field, text in ((where("answer"), turn.answer_en), (where("answer_zh"), turn.answer_zh)):
            if tools := [n for n in TOOL_NAMES if n in text]:
                yield GateFailure(
                    "machine_text", turn.index, gate_message("names_tool", where=field, tools=", ".join(tools))
                )
            for pattern, what in _MACHINE:
                if match := pattern.search(text):
                    yield GateFailure(
                        "machine_text", turn.index, gate_message("machine", where=field, what=what, match=match.group())
                    )


# --- the rules judge's term / value_unit checks (scenarios.rubric_match), on the gold answer ---------------


def check_passes(*, check: dict[str, Any], answer: str) -> bool | None:
    """Whether ``answer`` passes a ``term`` / ``value_unit`` check; None for the other kinds and for a
    malformed check (gate_rubric names it)."""
    try:
        validate_rubric_check(check)
    except ValueError:
        return None
    if check.get("kind") == "value_unit":
        passed, _why = check_value_unit(
            answer=answer, value=check["value"], unit=check["unit"], tolerance=check.get("tolerance", 0)
        )
        return passed
    if check.get("kind") == "term":
        return check_term(answer=answer, phrases=[*check["en"], *check["zh"]])[0]
    return None


def gate_self_rubric(draft: SessionDraft) -> Iterator[GateFailure]:
    for turn in draft.turns:
        for i, r in enumerate(turn.rubric):
            if not isinstance(r.check, dict):
                continue
            for lang, answer in (("en", turn.answer_en), ("zh", turn.answer_zh)):
                if check_passes(check=r.check, answer=answer) is False:
                    yield GateFailure(
                        "self_rubric",
                        turn.index,
                        gate_message("self_rubric", where=where("rubric", n=i + 1), text=r.text_en, lang=lang),
                    )


CONTENT_GATES = (gate_placeholders, gate_untranslated, gate_machine_text, gate_self_rubric)
