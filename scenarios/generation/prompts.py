"""Versioned prompts of the ``openai`` generation backend (writer, translator, auditor).

Every prompt has a name, a version and a SHA-256 over its text, recorded with each generated
session, so a reviewer can tell which wording produced (or audited) a turn. Change the text →
bump the version. The user message is the prompt's header followed by a JSON payload: the model
sees exactly the data the deterministic pipeline fixed (plan, gold calls, observations, derivations).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Prompt:
    name: str
    version: str
    system: str
    header: str  # first line(s) of the user message, followed by the JSON payload

    @property
    def sha256(self) -> str:
        text = f"{self.name}\n{self.version}\n{self.system}\n{self.header}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def messages(self, *, payload: dict[str, Any]) -> list[dict[str, str]]:
        body = json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True, default=str)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": f"{self.header}\n{body}"}]


WRITER = Prompt(
    name="turn_writer",
    version="3",
    system=(
        "You write one turn of a clinical benchmark session (PhysReview turn writer). A physician asks an "
        "assistant for help; the assistant's tool calls and their observations are already fixed and given "
        "to you. Write, in English:\n"
        "- request_explicit: the physician's full, unambiguous request for this turn (it must lead to exactly "
        "the given tool calls);\n"
        "- request_implicit: the same request rewritten with the given implicitness rule (null for turn 0);\n"
        "- answer: the gold answer, using ONLY facts, numbers and units present in the observations, the "
        "derivations or the requests. Never invent a value, date or drug. Mention every value in must_mention. "
        "It is what the physician reads: no tool names, resource ids or log lines; confirm a write in clinical "
        "words (what was ordered, held or flagged, for when, and why);\n"
        "- rubric: one short binary grading criterion per planned rubric item, in the same order, keeping its "
        "meaning and its numbers (the draft wording is a guide, not text to copy).\n"
        "Tool names such as Observation.search are written exactly as given, and so are the tool parameters "
        "a rubric item checks (their names and values, e.g. dose 'hold', priority 'urgent', category 'safety': "
        "the released tool contract, never other names such as status or replaces). Reply with ONE JSON object "
        'with the keys "request_explicit", "request_implicit", "answer", "rubric" and nothing else.'
    ),
    header="Write this turn. Input:",
)

TRANSLATOR = Prompt(
    name="turn_translator",
    version="3",
    system=(
        "You translate one turn of a clinical benchmark from English into Simplified Chinese as a physician "
        "would write it (PhysReview translator). Rules: keep every number exactly (no rounding, no unit "
        "conversion), keep units as written (mg/dL, mmol/L, mL/min...), keep tool names such as "
        "Observation.search, tool parameter names and values (dose, hold, priority, urgent, safety...) and "
        "identifiers untranslated, use the given Chinese terms for drugs, labs and "
        "diagnoses, and follow the implicitness rule for request_implicit. Translate every other English word "
        "(drug names, units and standard abbreviations such as INR, PO, BID may stay in Latin letters); record "
        "text you cannot translate is quoted as 病历原文“...”. Reply with ONE JSON object with "
        'the keys "request_explicit", "request_implicit", "answer", "rubric" (a list, same length and order) '
        "and nothing else."
    ),
    header="Translate this turn. Input:",
)

AUDITOR = Prompt(
    name="turn_auditor",
    version="1",
    system=(
        "You audit one turn of a clinical benchmark before physicians review it (PhysReview auditor). You get "
        "the requests, the tool calls with their observations, the declared derivations, the gold answer in "
        "English and Chinese, and the rubric. Judge four criteria strictly:\n"
        "- hallucination: does the answer state a fact absent from the observations, derivations or requests?\n"
        "- numeric_consistency: are all numbers, units and computations consistent with the observations, and "
        "identical between English and Chinese?\n"
        "- safety: could the answer or rubric lead to unsafe care (e.g. accepting a false premise, "
        "recommending a contraindicated drug)?\n"
        "- completeness: does the answer address the whole request and cover every rubric item?\n"
        'Reply with ONE JSON object {"hallucination": {"pass": true|false, "reason": "..."}, '
        '"numeric_consistency": {...}, "safety": {...}, "completeness": {...}} and nothing else. '
        "A reason is required when pass is false."
    ),
    header="Audit this turn. Input:",
)

REASK = (
    "Your reply could not be used: {problems}. Reply again with only the corrected JSON object, "
    "following every rule of the first message."
)

PROMPTS = (WRITER, TRANSLATOR, AUDITOR)
AUDIT_CRITERIA = ("hallucination", "numeric_consistency", "safety", "completeness")

SUBTYPE_RULES_EN = {
    "NA": "nominal anaphora: refer to {entity!r} (named in an earlier turn) only by a pronoun "
    "(it, its, them, they, their); do not name it",
    "PE": "predicate ellipsis: at most 5 words, drop the verb (e.g. 'Creatinine?')",
    "AE": "abstract/event anaphora: start with 'Given all that' and refer to everything discussed so far",
}
SUBTYPE_RULES_ZH = {
    "NA": "指代：用代词“它”“它们”或“他们”指代前文提到的对象，不要重复其名称",
    "PE": "谓语省略：极简短，省略谓语（如“肌酐呢？”）",
    "AE": "抽象指代：以“综合以上”开头，指代前面讨论的全部内容",
}


def manifest() -> dict[str, dict[str, str]]:
    """Name → version and hash of every prompt: stored with runs and sessions."""
    return {p.name: {"version": p.version, "sha256": p.sha256} for p in PROMPTS}
