"""CSV cells that a spreadsheet will not run as formulas (OWASP "CSV Injection").

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a formula by
Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)``, ``=cmd|' /C calc'!A0``). Such a cell is written
with a leading apostrophe, which spreadsheets show as text. Numbers are left alone (``-1.5`` as a float, or
as a string that is nothing but a number, is no formula), so numeric columns stay numeric.

Every CSV the project writes for people goes through :class:`SafeWriter` or :class:`SafeDictWriter`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value`` with an apostrophe in front when it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


class SafeWriter:
    """``csv.writer`` whose rows pass through :func:`safe_cell`."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        self._writer = csv.writer(file, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([safe_cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SafeDictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose values pass through :func:`safe_cell`."""

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({key: safe_cell(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for rowdict in rowdicts:
            self.writerow(rowdict)
