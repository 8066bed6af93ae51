"""Latin letters in Chinese text: which words Chinese clinical writing keeps (drug names, units,
abbreviations, codes, eponyms) and which are untranslated English (``gate_untranslated``; the turn
builders use it to decide whether a record text can stand in a Chinese answer or must be quoted)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

from ehr.fhir import TOOL_NAMES
from ehr.glossary import terms
from scenarios.patient.lexicon import MENTIONABLE_DRUGS

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’-][A-Za-z0-9]+)*")
# Quoted record text, labelled as such: kept verbatim on purpose (a reviewer compares it with the chart).
_RECORD_QUOTE = re.compile(r"原文[）)]?[：:]?\s*“[^”]*”")
_CJK = re.compile(r"[\u3400-\u9fff]")
# Written in Latin letters in Chinese clinical text as well.
_KEPT_WORDS = {
    "cockcroft",
    "gault",
    "icd",
    "ndc",
    "fhir",
    "ph",
    "egfr",
    "hba1c",
    "ntprobnp",
    "proBNP".casefold(),
    "bnp",
}


@cache
def _glossary_words() -> frozenset[str]:
    """Words of the glossary's drug and antibiotic names and of its units (``mg/dL`` → mg, dl)."""
    words: set[str] = set(_KEPT_WORDS)
    for kind in ("drug", "antibiotic", "unit"):
        for term in terms(kind=kind):
            words |= {w.casefold() for w in LATIN_WORD.findall(term)}
    for name in MENTIONABLE_DRUGS:
        words |= {w.casefold() for w in LATIN_WORD.findall(name)}
    return frozenset(words)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def _is_kept(word: str, allowed: set[str] | frozenset[str]) -> bool:
    if any(c.isdigit() for c in word) or len(word) == 1:
        return True  # codes (J441, Q4H), single letters (vitamin K, L of mEq/L)
    if word.isupper() or (any(c.isupper() for c in word[1:]) and not word[1:].isupper()):
        return True  # abbreviations (INR, BID, PO), tall-man drug names (MetFORMIN, PredniSONE)
    folded = word.casefold()
    return folded in allowed or folded.replace("-", "") in allowed


def untranslated_words(text: str, *, allowed: Iterable[str] = ()) -> list[str]:
    """English words of a Chinese text that Chinese clinical writing would not keep in Latin letters."""
    if not _CJK.search(text):
        return []  # not a Chinese text at all: gate_translation's business
    text = _RECORD_QUOTE.sub(" ", text)
    for name in TOOL_NAMES:
        text = text.replace(name, " ")
    kept = _glossary_words() | {a.casefold() for a in allowed}
    out: list[str] = []
    for word in LATIN_WORD.findall(text):
        if not _is_kept(word, kept) and word not in out:
            out.append(word)
    return out
