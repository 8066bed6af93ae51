"""Words the patient uses: drug classes, lay terms (EN + ZH) and Chinese phrases.

``data/lexicon.json`` holds what the EHR glossary (``ehr/data/glossary.json``) lacks: lay words
for a low-literacy patient, Chinese for the HPI / social-history phrases of the synthetic cohort,
and Chinese symptom words mapped back to English for matching questions. Medical terms are
looked up in the EHR glossary first, so both languages name a drug or diagnosis the same way the
EHR tools do.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from ehr import glossary

LEXICON_PATH = Path(__file__).resolve().parent / "data" / "lexicon.json"

# Drugs whose use a patient may mention outside the medication list, and the ones that matter
# for a safety conflict (bleeding, potassium, kidney) — the critical facts a persona may withhold.
MENTIONABLE_DRUGS = (
    "ibuprofen",
    "naproxen",
    "nsaids",
    "nsaid",
    "aspirin",
    "acetaminophen",
    "tylenol",
    "advil",
    "motrin",
    "aleve",
    "salt substitute",
    "potassium chloride",
    "antacids",
    "nitroglycerin",
    "albuterol",
    "insulin",
    "st john's wort",
)
INTERACTING_DRUGS = (
    "ibuprofen",
    "naproxen",
    "nsaid",
    "advil",
    "motrin",
    "aleve",
    "aspirin",
    "salt substitute",
    "potassium chloride",
    "st john's wort",
)
ANTICOAGULANTS = ("warfarin", "apixaban", "rivaroxaban", "dabigatran", "edoxaban", "enoxaparin", "heparin", "coumadin")
HIGH_RISK_DRUGS = (*ANTICOAGULANTS, "insulin", "glargine", "clopidogrel", "digoxin", "amiodarone", "lithium")
# Class words a physician may use instead of the drug's name.
DRUG_CLASSES = {
    "blood thinner": ANTICOAGULANTS,
    "anticoagulant": ANTICOAGULANTS,
    "抗凝": ANTICOAGULANTS,
    "painkiller": ("ibuprofen", "naproxen", "nsaid", "advil", "motrin", "aleve", "acetaminophen", "tylenol"),
    "pain medication": ("ibuprofen", "naproxen", "nsaid", "advil", "motrin", "aleve", "acetaminophen", "tylenol"),
    "over-the-counter": ("ibuprofen", "naproxen", "nsaid", "advil", "motrin", "aleve", "acetaminophen", "tylenol"),
    "止痛": ("ibuprofen", "naproxen", "nsaid", "advil", "motrin", "aleve", "acetaminophen", "tylenol"),
    "nsaid": ("ibuprofen", "naproxen", "nsaid", "advil", "motrin", "aleve"),
    "非甾体": ("ibuprofen", "naproxen", "nsaid", "advil", "motrin", "aleve"),
    "supplement": ("salt substitute", "potassium chloride", "st john's wort"),
    "salt": ("salt substitute", "potassium chloride"),
    "代盐": ("salt substitute", "potassium chloride"),
    "potassium": ("salt substitute", "potassium chloride"),
    "insulin": ("insulin", "glargine"),
}


@cache
def _data() -> dict[str, Any]:
    data = json.loads(LEXICON_PATH.read_text(encoding="utf-8"))
    for key in ("lay_en", "lay_zh", "phrases_zh", "terms_zh", "symptoms_zh_en", "drugs_zh"):
        if not isinstance(data.get(key), dict):
            raise ValueError(f"{LEXICON_PATH}: missing mapping {key!r}")
    return data


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().rstrip(".").strip()).casefold()


def _replace_all(text: str, table: dict[str, str], *, word_bounded: bool) -> str:
    # Longest terms first so "chest pain" wins over "pain".
    for term in sorted(table, key=len, reverse=True):  # stable: equal lengths keep the file order
        pattern = re.escape(term)
        if word_bounded:
            pattern = rf"(?<![A-Za-z]){pattern}(?![A-Za-z])"
        text = re.sub(pattern, table[term], text, flags=re.IGNORECASE)
    return text


def lay_en(text: str) -> str:
    """Clinical English → everyday words (``dyspnea`` → ``shortness of breath``)."""
    return _replace_all(text, _data()["lay_en"], word_bounded=True)


def lay_zh(text: str) -> str:
    """Chinese clinical terms → everyday Chinese (``呼吸困难`` → ``喘不上气``)."""
    return _replace_all(text, _data()["lay_zh"], word_bounded=False)


def drug_zh(name: str) -> str | None:
    """Chinese name of a drug as written in the record (EHR glossary first, then our own list)."""
    for candidate in (name, name.split(" (")[0], name.split()[0] if name.split() else name):
        found = glossary.translate(term=candidate, kind="drug")
        if found:
            return found
        own = _data()["drugs_zh"].get(_norm(candidate))
        if own:
            return own
    return None


def to_zh(text: str) -> str | None:
    """Chinese for a record phrase: the glossary (any kind), then our phrase table; None if unknown."""
    found = glossary.translate(term=text.strip().rstrip("."))
    if found:
        return found
    data = _data()
    return data["phrases_zh"].get(_norm(text)) or data["terms_zh"].get(_norm(text)) or drug_zh(text)


def zh_terms() -> dict[str, str]:
    return dict(_data()["terms_zh"])


def symptom_words_en(query: str) -> str:
    """English words for a (possibly Chinese) symptom query, for matching against the record."""
    out = [query]
    for zh, en in _data()["symptoms_zh_en"].items():
        if zh in query:
            out.append(en)
    return " ".join(out)


def drugs_zh_reverse() -> dict[str, str]:
    """Chinese drug name → English first word (for a medication asked in Chinese)."""
    out = {zh: en.split()[0].casefold() for en, zh in glossary.terms(kind="drug").items()}
    out.update({zh: en.split()[0].casefold() for en, zh in _data()["drugs_zh"].items()})
    return out
