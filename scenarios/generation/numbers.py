"""Numbers and units in free text, compared unit-normalised (1.70 == 1.7, 05 == 5)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

# A number not glued to a preceding letter (ICD codes like I4891 and ids are tokenised the same way in
# answers and observations, so they never need grounding of their own).
_NUMBER = re.compile(r"(?<![A-Za-z\d.])\d+(?:\.\d+)?")
UNITS = (
    "mg/dL",
    "mEq/L",
    "mL/min",
    "mmol/L",
    "K/uL",
    "g/dL",
    "ng/mL",
    "ug/mL",
    "mg/L",
    "pg/mL",
    "mmHg",
    "UNIT/HR",
    "kg",
    "mg",
    "sec",
    "bpm",
    "mL",
    "UNIT",
    "Lbs",
)
_UNIT_RE = {u: re.compile(rf"(?<![A-Za-z/]){re.escape(u)}(?![A-Za-z/])") for u in UNITS}


def numbers(text: str) -> set[Decimal]:
    return {Decimal(m).normalize() for m in _NUMBER.findall(text)}


def numbers_in(value: Any) -> set[Decimal]:
    """Numbers of any JSON-like value (observations, arguments): its JSON text, tokenised as text is."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return numbers(text)


def units(text: str) -> set[str]:
    return {u for u, rx in _UNIT_RE.items() if rx.search(text)}


def as_decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return Decimal(repr(float(value))).normalize().copy_abs()
