"""Deterministic, streaming MIMIC-style CSV.GZ output.

Byte-identical output for the same seed needs: rows in a fixed order, a fixed float format, and
a gzip header without timestamp or file name (``mtime=0``, ``filename=""``). Rows are streamed
to a temporary file per table, renamed into place only when the whole cohort succeeded, so
memory stays flat with the cohort size and a failed run never leaves half-written tables.
"""

import csv
import datetime as dt
import gzip
import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from ehr.mimic_tables import TABLES


def format_value(*, value: object) -> str:
    """Render one field as MIMIC prints it: empty for NULL, ``YYYY-MM-DD HH:MM:SS`` for datetimes."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, dt.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        # repr() is the shortest round-tripping form; drop ".0" as MIMIC prints whole numbers bare.
        text = repr(round(value, 4))
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def table_path(*, out_dir: Path, table: str) -> Path:
    return out_dir / f"{TABLES[table].path}.csv.gz"


class TableWriter:
    """One ``NAME.csv.gz`` being written: header first, then rows in the model's column order."""

    def __init__(self, *, out_dir: Path, table: str) -> None:
        self.table = table
        self.columns = TABLES[table].columns
        self._wanted = set(self.columns)
        self.path = table_path(out_dir=out_dir, table=table)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".partial")
        self._raw = open(self._tmp, "wb")  # noqa: SIM115 - closed in commit()/abort()
        self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0, compresslevel=9)
        self._text = io.TextIOWrapper(self._gz, encoding="utf-8", newline="")
        self._csv = csv.writer(self._text, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        self._csv.writerow(self.columns)
        self.count = 0

    def write(self, rows: Iterable[Mapping[str, object]]) -> None:
        """Append rows. A row whose keys differ from the model's columns is a generator bug: raise."""
        for row in rows:
            if row.keys() != self._wanted:
                missing = sorted(self._wanted - row.keys())
                extra = sorted(row.keys() - self._wanted)
                raise ValueError(f"{self.table}: row columns differ from the model (missing {missing}, extra {extra})")
            self._csv.writerow([format_value(value=row[c]) for c in self.columns])
            self.count += 1

    def _close(self) -> None:
        self._text.close()  # closes the gzip stream (writing its trailer) and the file

    def commit(self) -> None:
        self._close()
        self._tmp.replace(self.path)

    def abort(self) -> None:
        try:
            self._close()
        finally:
            self._tmp.unlink(missing_ok=True)
