"""Parquet (``turns.parquet``): the flat rows, written deterministically.

Row groups hold exactly :data:`ROW_GROUP` rows (the last one the rest), whatever chunks the rows
arrive in, and nothing time- or host-dependent goes into the metadata, so the same rows give the same
bytes (for one pyarrow version, which the file's ``created_by`` names).
"""

from __future__ import annotations

from itertools import accumulate
from operator import attrgetter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotations.snapshots.rows import FlatRow

ROW_GROUP = 8192

SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("session_id", pa.string()),
        ("turn_index", pa.int16()),
        ("language", pa.string()),
        ("scenario", pa.string()),
        ("tier", pa.int8()),
        ("clinical_task_domain", pa.string()),
        ("subject_id", pa.int64()),
        ("hadm_id", pa.int64()),
        ("current_date", pa.string()),
        ("source", pa.string()),
        ("task_type", pa.string()),
        ("is_implicit", pa.bool_()),
        ("subtype", pa.string()),
        ("tool_source", pa.string()),
        ("workup_mode", pa.string()),
        ("request", pa.string()),
        ("request_explicit", pa.string()),
        ("answer", pa.string()),
        ("rubric", pa.list_(pa.struct([("text", pa.string()), ("is_safety", pa.bool_())]))),
        ("gold_calls_json", pa.string()),
        ("turn_version", pa.int32()),
        ("reviewers", pa.list_(pa.string())),
        ("adjudicator", pa.string()),
    ]
)
_NAMES = SCHEMA.names
_RUBRIC_TYPE = SCHEMA.field("rubric").type.value_type
_SCALARS = [name for name in _NAMES if name not in ("rubric", "reviewers")]


def _table_of_dicts(rows: list[dict[str, Any]]) -> pa.Table:
    # Column by column in list comprehensions: much cheaper than appending cell by cell.
    return pa.Table.from_pydict({name: [row[name] for row in rows] for name in _NAMES}, schema=SCHEMA)


def _offsets(lists: list[list[Any]]) -> pa.Array:
    return pa.array(list(accumulate((len(x) for x in lists), initial=0)), pa.int32())


def _table_of_structs(rows: list[FlatRow]) -> pa.Table:
    """The same table as :func:`_table_of_dicts` (equal arrays, so equal bytes), built from flat columns:
    the list-of-struct ``rubric`` from offsets and two flat arrays instead of one dict per rubric item."""
    columns = {name: pa.array(list(map(attrgetter(name), rows)), SCHEMA.field(name).type) for name in _SCALARS}
    rubrics = [row.rubric for row in rows]
    cells = [cell for rubric in rubrics for cell in rubric]
    struct = pa.StructArray.from_arrays(
        [pa.array([c.text for c in cells], pa.string()), pa.array([c.is_safety for c in cells], pa.bool_())],
        fields=list(_RUBRIC_TYPE),
    )
    columns["rubric"] = pa.ListArray.from_arrays(_offsets(rubrics), struct, type=SCHEMA.field("rubric").type)
    reviewers = [row.reviewers for row in rows]
    columns["reviewers"] = pa.ListArray.from_arrays(
        _offsets(reviewers),
        pa.array([r for names in reviewers for r in names], pa.string()),
        type=SCHEMA.field("reviewers").type,
    )
    return pa.Table.from_arrays([columns[name] for name in _NAMES], schema=SCHEMA)


class ParquetRowWriter:
    def __init__(self, *, path: Path) -> None:
        self.path = path
        self.writer = pq.ParquetWriter(
            str(path),
            SCHEMA,
            compression="zstd",
            compression_level=3,
            use_dictionary=True,
            write_statistics=True,
            version="2.6",
            store_schema=True,
        )
        self.pending: list[dict[str, Any]] = []
        self.rows = 0

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        self.pending.extend(rows)
        while len(self.pending) >= ROW_GROUP:
            self._write(self.pending[:ROW_GROUP])
            del self.pending[:ROW_GROUP]

    def add_structs(self, rows: list[FlatRow]) -> None:
        """Rows as :class:`~annotations.snapshots.rows.FlatRow` structs (the export's fast path)."""
        self.add_rows(rows)  # type: ignore[arg-type]

    def _write(self, rows: list[Any]) -> None:
        table = _table_of_structs(rows) if isinstance(rows[0], FlatRow) else _table_of_dicts(rows)
        self.writer.write_table(table, row_group_size=ROW_GROUP)
        self.rows += len(rows)

    def close(self) -> list[dict[str, Any]]:
        if self.pending:
            self._write(self.pending)
            self.pending = []
        self.writer.close()
        return [{"name": self.path.name, "format": "parquet", "rows": self.rows}]
