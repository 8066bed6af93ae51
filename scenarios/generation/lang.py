"""English → Chinese terms for generated text: the EHR glossary first, then this package's extras.

Units stay as charted in both languages (the numbers-and-units gate compares them literally);
tool names are never passed through here.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ehr.glossary import translate

EXTRA_PATH = Path(__file__).resolve().parent / "data" / "glossary_extra.json"


@cache
def _extra() -> dict[str, str]:
    data = json.loads(EXTRA_PATH.read_text(encoding="utf-8"))
    return {k.casefold(): v for k, v in data["terms"].items()}


def zh(term: str, *, kind: str | None = None) -> str:
    """Chinese for a medical term; the English term itself when neither glossary has it."""
    found = translate(term=term, kind=kind) if kind else translate(term=term)
    if found:
        return found
    return _extra().get(term.strip().casefold(), term)


def lab_name(label: str) -> str:
    """Lower-case English display of a lab label ("INR(PT)" → "INR")."""
    return {"INR(PT)": "INR", "PTT": "PTT", "WBC": "WBC"}.get(label, label.lower())


def lab_code(label: str) -> str:
    """Search code for Observation.search (labels match case-insensitively)."""
    return label.lower()


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def split_drug(line: str) -> tuple[str, str | None]:
    """Longest leading drug name of a medication line known to the glossary, with its Chinese."""
    words = line.split(" ")
    for n in range(len(words), 0, -1):
        name = " ".join(words[:n])
        found = translate(term=name, kind="drug")
        if found:
            return name, found
    return words[0], None


def drug_line_zh(line: str) -> str:
    """'Apixaban 5 mg PO BID' → '阿哌沙班（Apixaban）5 mg PO BID': the drug named in Chinese, dose kept as written."""
    name, found = split_drug(line)
    return f"{found}（{name}）{line[len(name) :].strip()}" if found else line
