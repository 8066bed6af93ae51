"""Tracing the numbers of a gold answer and of its rubric items to what the session holds.

A number is *traced* when the same value (as a decimal: ``0.90`` == ``0.9``, ``1,000`` == ``1000``,
sign ignored) occurs in the grounding pool of the turn, which is made of, for this turn and the
turns before it (an answer may not rely on a later turn):

* the stored observations of every gold step except ``prepare_to_answer`` (whose observation is the
  answer itself), FHIR numbers with their unit, numbers written inside texts, patient answers;
* the arguments of the gold calls (a write call's date or dose is what the answer reports doing);
* the declared derivations (``Turn.derivations``: inputs, constants, result, and the numbers of the
  formula text, as ``scenarios.generation`` stores them);
* the session's ``env_info`` (age, ids) and the physician's requests, EN and ZH: a number of the
  request is checked as a premise against the record (:mod:`scenarios.audit.premises`), so it is
  not reported a second time here.

If the answer gives a unit right after the number and the pool has the value only with other
units, the number is untraced ("1.9 mg/dL" where the record has 1.9 mmol/L).

Not numbers (ignored): dates and clock times, which are traced as a whole against the dates and
times of the pool (``2180-07-19 06:00`` must occur, to the minute, in an observation; a year on
its own must be the year of an observed date); digits inside identifiers (``rx-1000097``,
``I4891``, ``HbA1c``, ``CO2``); list numbering (``1.``, ``(2)``, ``3)`` at the start of an item); turn,
step and item references (``turn 2``, ``step 3``, ``第2轮``); the bounds of rating scales (``0-10``,
``/10``, ``out of 10``). Chinese numerals (``两次``) are not read; full-width digits are.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

_FULL_WIDTH = str.maketrans("０１２３４５６７８９．", "0123456789.")
_DATE = re.compile(
    r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::\d{2})?)?(?!\d)"
    r"|(?<!\d)(\d{4})年(\d{1,2})月(\d{1,2})日"
)
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])")
# A word with digits glued to letters or joined by hyphens to a word: an identifier, not a number.
_W = "A-Za-z0-9_"
_IDENT = re.compile(
    rf"(?<![{_W}])[A-Za-z][A-Za-z_]*\d[{_W}]*(?:-[{_W}]+)*|(?<![{_W}])[A-Za-z][{_W}]*(?:-[{_W}]+)*-[{_W}]*\d[{_W}]*"
)
_SCALE = re.compile(r"(?<![\d.])(?:0|1)\s*[-–~]\s*10(?![\d.])|/\s*10(?![\d.])|\bout of 10\b", re.IGNORECASE)
_LIST_NUMBER = re.compile(
    r"(?m)^\s*[(（]?\d{1,2}[.)）](?=\s)|^\s*[(（]\d{1,2}[)）]|(?<=[\s;:；：])\d{1,2}[)）](?=\s*[A-Za-z\u4e00-\u9fff])"
)
_REFERENCE = re.compile(
    r"\b(?:turns?|steps?|items?|questions?|rubric|calls?)\s*#?\s*\d+|#\d+|第\s*\d+\s*[轮步项条个次]"
)
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(\.\d+)?")
UNITS = (
    "mg/dL",
    "mEq/L",
    "mmol/L",
    "mL/min",
    "mL/hr",
    "K/uL",
    "g/dL",
    "ng/mL",
    "ng/dL",
    "pg/mL",
    "ug/mL",
    "mcg/mL",
    "mg/L",
    "IU/L",
    "U/L",
    "UNIT/HR",
    "units/hr",
    "mg/hr",
    "mcg/min",
    "mm Hg",
    "mmHg",
    "bpm",
    "sec",
    "kg",
    "lbs",
    "Lbs",
    "mcg",
    "mg",
    "mL",
    "UNIT",
    "units",
    "unit",
    "mEq",
    "cm",
    "°C",
    "g",
    "%",
)
UNIT_AFTER = re.compile(r"\s*(" + "|".join(re.escape(u) for u in UNITS) + r")(?![A-Za-z/])")
_UNIT_EQUIV = {"mmhg": "mm hg", "units": "unit", "units/hr": "unit/hr", "lbs": "lbs"}


def unit_key(unit: str | None) -> str | None:
    if not unit:
        return None
    key = unit.strip().lower()
    return _UNIT_EQUIV.get(key, key)


def as_decimal(text: str) -> Decimal | None:
    try:
        return abs(Decimal(text.replace(",", ""))).normalize()
    except InvalidOperation:
        return None


@dataclass(frozen=True)
class NumberToken:
    text: str
    value: Decimal
    unit: str | None


@dataclass
class Tokens:
    numbers: list[NumberToken] = field(default_factory=list)
    dates: list[tuple[str, str | None]] = field(default_factory=list)  # (YYYY-MM-DD, HH:MM or None)
    clocks: list[str] = field(default_factory=list)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def tokenize(text: str) -> Tokens:
    """Dates, clock times and numbers (with the unit written after them) of a text."""
    text = text.translate(_FULL_WIDTH)
    out = Tokens()
    for m in _DATE.finditer(text):
        if m.group(1):
            out.dates.append(
                (f"{m.group(1)}-{m.group(2)}-{m.group(3)}", f"{m.group(4)}:{m.group(5)}" if m.group(4) else None)
            )
        else:
            out.dates.append((f"{m.group(6)}-{int(m.group(7)):02d}-{int(m.group(8)):02d}", None))
    text = _mask(text, (m.span() for m in _DATE.finditer(text)))
    for m in _CLOCK.finditer(text):
        out.clocks.append(f"{int(m.group(1)):02d}:{m.group(2)}")
    text = _mask(text, (m.span() for m in _CLOCK.finditer(text)))
    for rx in (_IDENT, _SCALE, _REFERENCE, _LIST_NUMBER):
        text = _mask(text, (m.span() for m in rx.finditer(text)))
    for m in _NUMBER.finditer(text):
        raw = m.group(0)
        value = as_decimal(raw)
        if value is None:
            continue
        unit = UNIT_AFTER.match(text, m.end())
        out.numbers.append(NumberToken(raw, value, unit.group(1) if unit else None))
    return out


@dataclass
class Pool:
    """What a turn's numbers may be traced to: values (with the units seen), dates, times."""

    values: dict[Decimal, set[str | None]] = field(default_factory=dict)
    dates: set[str] = field(default_factory=set)
    datetimes: set[str] = field(default_factory=set)  # "YYYY-MM-DD HH:MM"
    clocks: set[str] = field(default_factory=set)
    years: set[Decimal] = field(default_factory=set)

    def add_value(self, value: Any, unit: str | None = None) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int | float | Decimal):
            dec = as_decimal(str(value))
            if dec is not None:
                self.values.setdefault(dec, set()).add(unit_key(unit))
        elif isinstance(value, str):
            self.add_text(value)

    def add_text(self, text: str) -> None:
        tokens = tokenize(text)
        for n in tokens.numbers:
            self.values.setdefault(n.value, set()).add(unit_key(n.unit))
        for day, clock in tokens.dates:
            self.dates.add(day)
            self.years.add(Decimal(int(day[:4])))
            if clock:
                self.datetimes.add(f"{day} {clock}")
                self.clocks.add(clock)
        self.clocks.update(tokens.clocks)

    def add_json(self, value: Any) -> None:
        """Every number and text of a JSON value; a FHIR quantity's value carries its unit."""
        if isinstance(value, dict):
            unit = value.get("unit") if isinstance(value.get("unit"), str) else None
            for key, item in value.items():
                if key == "value" and unit is not None and isinstance(item, int | float):
                    self.add_value(item, unit)
                else:
                    self.add_json(item)
        elif isinstance(value, list):
            for item in value:
                self.add_json(item)
        elif value is not None:
            self.add_value(value)


def derivation_sources(derivations: Any) -> list[Any]:
    """The parts of ``Turn.derivations`` a number may come from (the generator's Derivation.__dict__)."""
    out: list[Any] = []
    for d in derivations if isinstance(derivations, list) else []:
        if not isinstance(d, dict):
            continue
        unit = d.get("unit") if isinstance(d.get("unit"), str) else None
        for key in ("inputs", "constants"):
            if isinstance(d.get(key), dict):
                out.extend(d[key].values())
        if isinstance(d.get("formula"), str):
            out.append(d["formula"])
        if "result" in d:
            out.append((d["result"], unit))
    return out


@dataclass(frozen=True)
class Untraced:
    """One number (or date/time) of a text that the pool does not hold; ``reason`` says which check failed."""

    text: str
    reason: str  # value | unit | date | time | year
    record_units: tuple[str, ...] = ()
    token: NumberToken | None = None


def untraced(*, text: str, pool: Pool) -> list[Untraced]:
    tokens = tokenize(text)
    out: list[Untraced] = []
    for day, clock in tokens.dates:
        if day not in pool.dates:
            out.append(Untraced(day if clock is None else f"{day} {clock}", "date"))
        elif clock is not None and f"{day} {clock}" not in pool.datetimes:
            out.append(Untraced(f"{day} {clock}", "time"))
    for clock in tokens.clocks:
        if clock not in pool.clocks:
            out.append(Untraced(clock, "time"))
    for n in tokens.numbers:
        units = pool.values.get(n.value)
        if units is None:
            if not (n.value in pool.years and n.unit is None):
                out.append(Untraced(_shown(n), "value", token=n))
            continue
        wanted = unit_key(n.unit)
        if wanted is not None and None not in units and wanted not in units:
            out.append(Untraced(_shown(n), "unit", tuple(sorted(u for u in units if u))))
    return out


def _shown(n: NumberToken) -> str:
    return f"{n.text} {n.unit}" if n.unit else n.text


def pool_for(*, env_info: str, requests: Iterable[str], steps: Iterable[Any], derivations: Iterable[Any]) -> Pool:
    """The pool of one turn from what the session stores (see the module docstring)."""
    pool = Pool()
    pool.add_text(env_info or "")
    for text in requests:
        pool.add_text(text or "")
    for step in steps:
        pool.add_json(step.arguments)
        observation = step.observation
        if isinstance(observation, str):
            # Some stored observations are JSON text; their numbers count the same.
            with contextlib.suppress(ValueError):
                observation = json.loads(observation)
        pool.add_json(observation)
    for source in derivations:
        if isinstance(source, tuple):
            pool.add_value(*source)
        else:
            pool.add_json(source)
    return pool
