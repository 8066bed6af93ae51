"""PhysAssistBench JSONL: one file per scenario, the frozen lines in the items' order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotations.snapshots.exporters.hashed import HashedFile


class PabWriter:
    def __init__(self, *, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.files: dict[str, HashedFile] = {}
        self.rows: dict[str, int] = {}

    def add(self, item: Any) -> None:
        handle = self.files.get(item.scenario)
        if handle is None:
            handle = self.files[item.scenario] = HashedFile(self.out_dir / f"{item.scenario}.jsonl")
            self.rows[item.scenario] = 0
        line = item.record_json
        # UTF-8 bytes as a text file with newline="\n" wrote them (frozen lines have no raw newline).
        handle.write(line if isinstance(line, bytes) else line.encode("utf-8"))
        handle.write(b"\n")
        self.rows[item.scenario] += 1

    def close(self) -> list[dict[str, Any]]:
        done = {s: handle.close() for s, handle in self.files.items()}
        return [{"name": f"{s}.jsonl", "format": "pab", "rows": n, **done[s]} for s, n in self.rows.items()]
