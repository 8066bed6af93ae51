"""Flat per-turn JSONL (``turns.jsonl``): one row per turn and language, UTF-8, Chinese as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotations.snapshots.exporters.hashed import HashedFile
from annotations.snapshots.rows import encode_row


class FlatJsonlWriter:
    def __init__(self, *, path: Path) -> None:
        self.path = path
        self.handle = HashedFile(path)
        self.rows = 0

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        self.handle.write(b"".join(encode_row(row) + b"\n" for row in rows))
        self.rows += len(rows)

    def add_lines(self, data: bytes, n: int) -> None:
        """``n`` rows already encoded as JSONL (:func:`annotations.snapshots.rows.encode_row_lines`)."""
        self.handle.write(data)
        self.rows += n

    def close(self) -> list[dict[str, Any]]:
        return [{"name": self.path.name, "format": "jsonl", "rows": self.rows, **self.handle.close()}]
