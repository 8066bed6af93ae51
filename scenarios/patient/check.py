"""Check that a patient answer states nothing beyond the memory facts it lists.

Used by tests and available to the generation gates / reviewers: every listed fact exists in the
memory, every number in the text occurs in those facts' evidence, and every drug the text names
(English or Chinese) is named in those facts' evidence.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ehr import glossary
from scenarios.patient.facts import Fact, HealthMemory
from scenarios.patient.lexicon import MENTIONABLE_DRUGS, drugs_zh_reverse

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@cache
def _drug_words() -> tuple[tuple[str, str], ...]:
    """(word as it may appear in an answer, English word it stands for)."""
    pairs = {(en.split()[0].casefold(), en.split()[0].casefold()) for en in glossary.terms(kind="drug")}
    pairs |= {(d, d.split()[0]) for d in MENTIONABLE_DRUGS}
    pairs |= set(drugs_zh_reverse().items())
    return tuple(sorted((w.casefold(), en) for w, en in pairs if len(w) >= 2))


def _fact_text(fact: Fact) -> str:
    cols = fact.attrs.get("columns") or {}
    return " ".join([fact.evidence, *(str(v) for v in cols.values())])


def check_answer(*, answer: dict[str, Any], memory: HealthMemory) -> list[str]:
    """Problems found (empty list: the answer is grounded in the facts it lists)."""
    problems: list[str] = []
    facts = []
    for fact_id in answer.get("facts") or []:
        fact = memory.by_id(fact_id)
        if fact is None:
            problems.append(f"fact {fact_id} is not in the memory")
        else:
            facts.append(fact)
    text = str(answer.get("answer") or "")
    evidence = " ".join(_fact_text(f) for f in facts)
    lowered, evidence_low = text.casefold(), evidence.casefold()
    # Longest names first, each consumed once found: 甘精胰岛素 is not also 胰岛素, 维生素K1 not the number 1.
    for word, english in sorted(_drug_words(), key=lambda p: (-len(p[0]), p)):
        if word not in lowered:
            continue
        if english not in evidence_low:
            problems.append(f"drug {word!r} is named but not in the cited facts")
        lowered = lowered.replace(word, " ")
    allowed = set(_NUMBER.findall(evidence))
    for number in _NUMBER.findall(lowered):
        if number not in allowed:
            problems.append(f"number {number} is not in the cited facts")
    return problems
