"""Header planning and value validation, both derived from the model (the single source of truth).

Values are checked the way the database column would take them, so SQLite (which accepts almost
anything) and PostgreSQL end up with the same rows: integers within the column's range (an
integral decimal spelling such as ``22444183.0`` counts as the integer: pandas writes integer
columns with empty fields that way; ``12.5`` is an error), plain decimal floats, ``YYYY-MM-DD``
dates, ``YYYY-MM-DD HH:MM:SS`` (or ``YYYY-MM-DD``) datetimes, text within ``max_length`` (after
the repairs of :mod:`ehr.importer.codes`, e.g. NDC leading zeros). Empty fields are NULL; an
empty required field is an error.
Validated values are ready for either loader: ``int``, ``float``, canonical date/datetime
strings (naive wall-clock times, stored as UTC: the connection's time zone is UTC), ``str``.
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

from django.db import models

from ehr.importer.codes import TEXT_NORMALISERS
from ehr.importer.errors import RowError, TableImportError
from ehr.importer.source import shorten
from ehr.mimic_tables import MimicTableSpec

_INT_RANGES = {
    "SmallIntegerField": (-(2**15), 2**15 - 1),
    "IntegerField": (-(2**31), 2**31 - 1),
    "BigIntegerField": (-(2**63), 2**63 - 1),
}
# Digits, optionally followed by a fraction: "22444183.0" (pandas) is accepted when the fraction is zeros.
_INT_RE = re.compile(r"([+-]?[0-9]+)(?:\.([0-9]*))?")
# Plain decimal notation only: Python's float() also takes "nan", "inf" and "1_000".
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?: [0-9]{2}:[0-9]{2}:[0-9]{2})?")

Parser = Callable[[str], object]

# Plausibility (issue 36 F11), beyond what the column can store: MIMIC shifts dates into roughly 2100–2210, so
# the window is wide, but a death in 2999 or an age of -40 is a broken file, not a patient.
YEARS = (1800, 2299)
_RANGES = {"anchor_age": (0, 130), "anchor_year": YEARS}


def _plausible_range(column: str) -> tuple[int, int] | None:
    """The range of an integer column beyond its type's: identifiers (``*_id``, ``itemid``) are never negative."""
    if column in _RANGES:
        return _RANGES[column]
    if column.endswith("_id") or column == "itemid":
        return (0, 2**63 - 1)
    return None


def implausible_conditions(*, spec: MimicTableSpec, columns: list[str]) -> list[str]:
    """SQL conditions (on quoted-free column names) true for a row the validated path would refuse as
    implausible: how rows loaded by the raw COPY are checked."""
    by_column = {f.column: f for f in spec.fields}
    out = []
    for column in columns:
        kind = by_column[column].get_internal_type()
        if kind in _INT_RANGES and (bounds := _plausible_range(column)) is not None:
            out.append(f'("{column}" < {bounds[0]} OR "{column}" > {bounds[1]})')
        elif kind in ("DateField", "DateTimeField"):
            # Comparing with the first and last instants of the plausible years, not EXTRACT(YEAR ...):
            # the same rows (both in the session's time zone, UTC), several times faster over a large table.
            out.append(f"(\"{column}\" < '{YEARS[0]:04d}-01-01' OR \"{column}\" >= '{YEARS[1] + 1:04d}-01-01')")
    return out


def whole_number(raw: str, type_name: str = "int") -> int:
    """``12``, ``12.0``, ``12.`` → 12; ``12.5`` and non-numbers raise ``ValueError`` (range not checked)."""
    match = _INT_RE.fullmatch(raw)
    if not match:
        raise ValueError(f"bad {type_name}")
    if match[2] and match[2].strip("0"):
        raise ValueError(f"bad {type_name} (not a whole number)")
    return int(match[1])


def is_decimal_spelling(raw: str) -> bool:
    """A whole number written with a decimal point (``22444183.0``): PostgreSQL's integer input refuses it."""
    match = _INT_RE.fullmatch(raw)
    return bool(match and match[2] is not None and not match[2].strip("0"))


def integer_columns(spec: MimicTableSpec) -> set[str]:
    return {f.column for f in spec.fields if f.get_internal_type() in _INT_RANGES}


def _int_parser(low: int, high: int, type_name: str, plausible: tuple[int, int] | None = None) -> Parser:
    def parse(raw: str) -> int:
        value = whole_number(raw, type_name)
        if not low <= value <= high:
            raise ValueError(f"{type_name} out of range")
        if plausible is not None and not plausible[0] <= value <= plausible[1]:
            raise ValueError(
                "implausible value (negative identifier)"
                if plausible[0] == 0 and value < 0 and plausible[1] == 2**63 - 1
                else f"implausible value (outside {plausible[0]}–{plausible[1]})"
            )
        return value

    return parse


def _parse_float(raw: str) -> float:
    if not _FLOAT_RE.fullmatch(raw):
        raise ValueError("bad float")
    value = float(raw)
    if math.isinf(value):  # "1e400": PostgreSQL refuses it, so this path does too
        raise ValueError("float out of range")
    return value


def _plausible_year(raw: str) -> None:
    if not YEARS[0] <= int(raw[:4]) <= YEARS[1]:
        raise ValueError(f"implausible date (year outside {YEARS[0]}–{YEARS[1]})")


def _parse_date(raw: str) -> str:
    if not _DATE_RE.fullmatch(raw):
        raise ValueError("bad date (expected YYYY-MM-DD)")
    try:
        date.fromisoformat(raw)
    except ValueError:
        raise ValueError("bad date (no such date)") from None
    _plausible_year(raw)
    return raw


def _parse_datetime(raw: str) -> str:
    if not _DATETIME_RE.fullmatch(raw):
        raise ValueError("bad datetime (expected YYYY-MM-DD HH:MM:SS or YYYY-MM-DD)")
    try:
        datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError("bad datetime (no such date or time)") from None
    _plausible_year(raw)
    # Same text Django's SQLite backend writes for a naive-UTC datetime.
    return raw if len(raw) == 19 else raw + " 00:00:00"


def _text_parser(max_length: int | None) -> Parser:
    def parse(raw: str) -> str:
        if "\x00" in raw:
            raise ValueError("NUL character in text")
        if max_length is not None and len(raw) > max_length:
            raise ValueError(f"value too long ({len(raw)} > {max_length} characters)")
        return raw

    return parse


def parser_for_field(f: models.Field) -> Parser:
    """How a field's CSV text is checked and converted."""
    kind = f.get_internal_type()
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        name = {"SmallIntegerField": "smallint", "BigIntegerField": "bigint"}.get(kind, "int")
        return _int_parser(low, high, name, _plausible_range(f.column))
    if kind == "FloatField":
        return _parse_float
    if kind == "DateTimeField":
        return _parse_datetime
    if kind == "DateField":
        return _parse_date
    if kind in ("CharField", "TextField"):
        text = _text_parser(getattr(f, "max_length", None) if kind == "CharField" else None)
        normalise = TEXT_NORMALISERS.get((f.model._meta.db_table, f.column))
        return text if normalise is None else lambda raw: text(normalise(raw))
    raise TypeError(f"importer has no parser for {kind} ({f.model.__name__}.{f.name})")


@dataclass(frozen=True)
class HeaderPlan:
    """How a file's header maps onto its table."""

    header: list[str]  # column names in file order
    load_columns: list[str]  # model columns present in the file, in file order
    indices: list[int]  # position of each load column in a record
    extra: list[str] = field(default_factory=list)  # unknown columns, ignored
    missing_nullable: list[str] = field(default_factory=list)  # loaded as NULL
    subject_index: int | None = None  # position of subject_id in a record

    @property
    def raw_copy_ok(self) -> bool:
        """Every file column is a table column, so the file can go to COPY unchanged."""
        return not self.extra

    def warnings(self) -> list[str]:
        """What the header makes the import do differently (the caller puts the file name in front)."""
        out = []
        if self.extra:
            # pandas' index column has an empty name.
            names = ", ".join(n or "(unnamed)" for n in self.extra)
            out.append(f"ignoring unknown column(s): {names}")
        if self.missing_nullable:
            out.append(f"column(s) not in file, loaded as NULL: {', '.join(self.missing_nullable)}")
        return out


def plan_header(*, spec: MimicTableSpec, header: list[str], label: str) -> HeaderPlan:
    """Match a header against the table; missing required columns or duplicates are an error."""
    seen: set[str] = set()
    duplicates = sorted({n for n in header if n in seen or seen.add(n)})
    if duplicates:
        raise TableImportError(f"{label}:1: duplicate column(s) in header: {', '.join(duplicates)}")
    missing = [c for c in spec.required_columns if c not in seen]
    if missing:
        raise TableImportError(
            f"{label}:1: header lacks required column(s): {', '.join(missing)} "
            f"(expected {spec.name} columns: {', '.join(spec.columns)})"
        )
    known = set(spec.columns)
    load = [n for n in header if n in known]
    return HeaderPlan(
        header=header,
        load_columns=load,
        indices=[header.index(n) for n in load],
        extra=[n for n in header if n not in known],
        missing_nullable=[c for c in spec.columns if c not in seen],
        subject_index=header.index("subject_id") if "subject_id" in seen else None,
    )


RowConverter = Callable[[list[str]], tuple]


def make_converter(*, spec: MimicTableSpec, plan: HeaderPlan) -> RowConverter:
    """A function turning a record's fields into a tuple of values for ``plan.load_columns``.

    Raises :class:`RowError` naming the column and value.
    """
    by_column = {f.column: f for f in spec.fields}
    steps = [
        (i, c, not by_column[c].null, parser_for_field(by_column[c]))
        for i, c in zip(plan.indices, plan.load_columns, strict=True)
    ]
    width = len(plan.header)

    def convert(fields: list[str]) -> tuple:
        if len(fields) != width:
            raise RowError(f"wrong number of fields (expected {width}, got {len(fields)})")
        out = []
        for i, column, required, parse in steps:
            raw = fields[i]
            if raw == "":
                if required:
                    raise RowError(f"empty required value (column {column})")
                out.append(None)
                continue
            try:
                out.append(parse(raw))
            except ValueError as exc:
                raise RowError(f"{exc} (column {column}, value '{shorten(raw)}')") from None
        return tuple(out)

    return convert
