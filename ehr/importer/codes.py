"""Code columns that pandas-written files spoil, and how the importer repairs them.

``prescriptions.ndc`` is an 11-digit National Drug Code kept as text (``00409176230``), ``0`` when
the order has no code. A file that went through pandas read it as a number: the leading zeros are
gone (``409176230``) and, in a column with empty fields, a ``.0`` is appended (``409176230.0``,
``0.0``). The rule, the same on every path and in both layouts:

- a value of digits with an optional all-zero fraction (``409176230``, ``409176230.0``) loses the
  fraction; if it then has fewer than 11 digits it is left-padded with zeros to 11, except an
  all-zero value, which becomes ``0`` (MIMIC's "no code", which the FHIR tools leave out);
- anything else (11 or more digits, hyphenated codes, other text) is stored as written.

The validated path applies :func:`normalise_ndc` to each value; the raw PostgreSQL COPY path
loads the bytes unchanged and then runs :data:`SQL_FIXUPS` once over the freshly loaded table,
which changes exactly the values the Python rule would change (tests compare both paths).
"""

import re
from collections.abc import Callable

NDC_DIGITS = 11
_NUMERIC_NDC_RE = re.compile(r"([0-9]+)(?:\.0*)?")


def normalise_ndc(raw: str) -> str:
    """``409176230.0`` → ``00409176230``; ``0.0`` → ``0``; other values unchanged."""
    match = _NUMERIC_NDC_RE.fullmatch(raw)
    if not match:
        return raw
    digits = match[1]
    if len(digits) >= NDC_DIGITS:
        return digits
    if not digits.strip("0"):
        return "0"
    return digits.zfill(NDC_DIGITS)


# (db_table, column) → normaliser applied before the value is checked.
TEXT_NORMALISERS: dict[tuple[str, str], Callable[[str], str]] = {
    ("mimic_prescriptions", "ndc"): normalise_ndc,
}

# The same rule in SQL, for rows PostgreSQL loaded from the raw file. The WHERE clause selects the
# values the rule changes: a fraction to drop, or 1-10 digits other than the canonical "0".
_NDC_SQL = r"""
UPDATE {table} SET ndc = CASE
    WHEN length(split_part(ndc, '.', 1)) >= 11 THEN split_part(ndc, '.', 1)
    WHEN split_part(ndc, '.', 1) ~ '^0+$' THEN '0'
    ELSE lpad(split_part(ndc, '.', 1), 11, '0')
END
WHERE ndc ~ '^([0-9]+\.0*|[0-9]{{1,10}})$' AND ndc <> '0'
"""

# db_table → UPDATE statements (``{table}`` is the quoted table name).
SQL_FIXUPS: dict[str, list[str]] = {
    "mimic_prescriptions": [_NDC_SQL],
}
