"""Rejected rows of ``--skip-bad-rows``: CSV files of line, reason and the record's raw fields (cells a
spreadsheet would run as formulas get a leading apostrophe: core.csvcells).

One rejects file per input file that has bad rows, so that every line number refers to one file
and the raw fields follow that file's header: ``TABLE.rejects.csv`` in the standard layout,
``TABLE.<patient folder>.rejects.csv`` in the per-patient layout.
"""

from pathlib import Path
from typing import IO, Any

from core.csvcells import SafeWriter
from ehr.importer.layout import SourceFile


class FileRejects:
    """Rejected rows of one input file. Opened on first use, so a file without bad rows leaves nothing."""

    def __init__(self, *, path: Path, header: list[str]) -> None:
        self.path = path
        self.header = header
        self.count = 0
        self._file: IO[str] | None = None
        self._writer: Any = None  # csv writer objects have no public type

    def add(self, *, line: int, reason: str, fields: list[str]) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "w", newline="", encoding="utf-8")  # noqa: SIM115 - closed in close()
            self._writer = SafeWriter(self._file)
            self._writer.writerow(["line", "reason", *self.header])
        self._writer.writerow([line, reason, *fields])
        self.count += 1

    def close(self) -> Path | None:
        if self._file is None:
            return None
        self._file.close()
        self._file = None
        return self.path


class TableRejects:
    """The rejects files of one table's import."""

    def __init__(self, *, directory: Path, table: str) -> None:
        self.directory = directory
        self.table = table
        self._files: list[FileRejects] = []
        # Rejects from an earlier run would otherwise look like this run's result.
        (directory / f"{table}.rejects.csv").unlink(missing_ok=True)
        if directory.is_dir():
            for old in directory.glob(f"{table}.*.rejects.csv"):
                old.unlink(missing_ok=True)

    def for_file(self, *, source: SourceFile, header: list[str]) -> FileRejects:
        name = (
            f"{self.table}.rejects.csv"
            if source.subject_id is None
            else f"{self.table}.{source.path.parent.name}.rejects.csv"
        )
        rejects = FileRejects(path=self.directory / name, header=header)
        self._files.append(rejects)
        return rejects

    @property
    def count(self) -> int:
        return sum(f.count for f in self._files)

    def close(self) -> list[Path]:
        """The files written, in input order."""
        return [path for f in self._files if (path := f.close())]
