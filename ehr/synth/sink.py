"""Row collector and id allocator shared by the event generators.

Ids are handed out in generation order (patients in order, then admissions, then events), so
they are stable for a given seed and look like MIMIC's: 8-digit subject/hadm/stay ids. Rows are
buffered for one patient and then flushed to the table writers, keeping memory flat.
"""

from collections import defaultdict
from pathlib import Path

from ehr.mimic_tables import TABLES
from ehr.synth.writer import TableWriter

SUBJECT_BASE = 10_000_000
HADM_BASE = 20_000_000


class Sink:
    def __init__(self, *, out_dir: Path) -> None:
        self.rows: dict[str, list[dict[str, object]]] = {name: [] for name in TABLES}
        self._next: defaultdict[str, int] = defaultdict(int)
        self._writers: dict[str, TableWriter] = {}
        try:
            for name in TABLES:
                self._writers[name] = TableWriter(out_dir=out_dir, table=name)
        except BaseException:
            self.abort()
            raise

    def next_id(self, kind: str, base: int = 1) -> int:
        """Next integer in the sequence ``kind``, starting at ``base``."""
        value = base + self._next[kind]
        self._next[kind] += 1
        return value

    def add(self, table: str, **row: object) -> None:
        self.rows[table].append(row)

    def flush(self) -> None:
        """Write the buffered rows of every table and empty the buffers."""
        for name, rows in self.rows.items():
            self._writers[name].write(rows)
            rows.clear()

    def commit(self) -> dict[str, int]:
        """Flush, then move every table into place; return row counts by table."""
        self.flush()
        for writer in self._writers.values():
            writer.commit()
        return {name: writer.count for name, writer in self._writers.items()}

    def abort(self) -> None:
        """Drop every partial file (after an error or an interrupt)."""
        for writer in self._writers.values():
            writer.abort()
