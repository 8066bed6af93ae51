"""Helpers for the PhysAssistBench tests: the sample records and writing JSONL files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).parent / "data" / "pab_sample.jsonl"


def sample_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def record(i: int) -> dict[str, Any]:
    return copy.deepcopy(sample_records()[i])


def write_jsonl(path: Path, items: list[dict[str, Any] | str | bytes]) -> Path:
    """Dicts are dumped as JSON lines; strings and bytes are written as the line itself."""
    chunks = []
    for item in items:
        if isinstance(item, bytes):
            chunks.append(item)
        elif isinstance(item, str):
            chunks.append(item.encode("utf-8"))
        else:
            chunks.append(json.dumps(item, ensure_ascii=False).encode("utf-8"))
    path.write_bytes(b"\n".join(chunks) + b"\n")
    return path
