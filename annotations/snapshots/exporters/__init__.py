"""Writing a snapshot's frozen sessions to files, all chosen formats in one streaming pass.

Formats: ``pab`` (PhysAssistBench JSONL, one ``<scenario>.jsonl`` per scenario present, the frozen
lines as they are), ``jsonl`` (``turns.jsonl``, one row per turn and language, see
:mod:`annotations.snapshots.rows`), ``parquet`` (``turns.parquet``, the same rows). The input is any
iterable of objects with ``record_id``, ``scenario``, ``source``, ``record_json``, ``flat_json`` and
``review`` — the snapshot's items from a chunked query, or the benchmark's generator — so memory stays
bounded by one chunk plus one Parquet row group. Output bytes depend only on the items: re-exporting gives the
same files.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.exporters.heap import retained_heap
from annotations.snapshots.exporters.jsonl import FlatJsonlWriter
from annotations.snapshots.exporters.pab import PabWriter
from annotations.snapshots.exporters.parquet import ParquetRowWriter
from annotations.snapshots.rows import decode_flat_source, encode_row_lines, flat_row_structs

FORMATS = ("pab", "jsonl", "parquet")


class Frozen(Protocol):
    record_id: str
    scenario: str
    source: str
    record_json: str
    flat_json: str
    review: dict[str, Any]


def parse_formats(value: str | Iterable[str]) -> list[str]:
    """``all``, one name or several; raises :class:`SnapshotError` on an unknown one."""
    names = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for name in names:
        if name == "all":
            out.extend(FORMATS)
        elif name in FORMATS:
            out.append(name)
        else:
            raise SnapshotError(f"unknown format {name!r} (use {', '.join(FORMATS)} or all)")
    if not out:
        raise SnapshotError("no format given")
    return [f for f in FORMATS if f in out]


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def write_files(
    *,
    items: Iterable[Frozen],
    formats: list[str],
    out_dir: Path,
    languages: list[str],
    on_item: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Write every format to ``out_dir`` (an existing, empty folder); returns the manifest file entries
    (name, format, bytes, sha256, rows) sorted by name."""
    writers: list[Any] = []
    if "pab" in formats:
        writers.append(PabWriter(out_dir=out_dir))
    flat = []
    if "jsonl" in formats:
        flat.append(FlatJsonlWriter(path=out_dir / "turns.jsonl"))
    if "parquet" in formats:
        flat.append(ParquetRowWriter(path=out_dir / "turns.parquet"))
    jsonl = next((w for w in flat if isinstance(w, FlatJsonlWriter)), None)
    table = next((w for w in flat if isinstance(w, ParquetRowWriter)), None)
    pab = writers[0] if writers else None
    gc_was_enabled = gc.isenabled()
    # The loop allocates many short-lived, acyclic objects (decoded records, row structs); the cyclic
    # collector would keep walking them (and every long-lived object) for nothing: ~15% of the CPU time.
    gc.disable()
    try:
        _write_all(items=items, pab=pab, jsonl=jsonl, table=table, languages=languages, on_item=on_item)
    finally:
        if gc_was_enabled:
            gc.enable()
        entries = [entry for writer in (*writers, *flat) for entry in writer.close()]
    for entry in entries:
        if "sha256" not in entry:  # Parquet: small, and pyarrow writes it itself
            path = out_dir / entry["name"]
            entry["bytes"] = path.stat().st_size
            entry["sha256"] = sha256_of(path)
    return sorted(({k: e[k] for k in ("name", "format", "bytes", "sha256", "rows")} for e in entries), key=_name)


def _write_all(
    *,
    items: Iterable[Frozen],
    pab: PabWriter | None,
    jsonl: FlatJsonlWriter | None,
    table: ParquetRowWriter | None,
    languages: list[str],
    on_item: Callable[[], None] | None,
) -> None:
    """One pass: each item's PAB line is written as it is; its flat projection is decoded once into row
    structs that feed both the JSONL encoder and the Parquet columns."""
    flat = jsonl is not None or table is not None
    with retained_heap():
        for item in items:
            if pab is not None:
                pab.add(item)
            if flat:
                rows = flat_row_structs(
                    record=decode_flat_source(item.flat_json),
                    source=item.source,
                    review=item.review,
                    languages=languages,
                )
                if jsonl is not None:
                    jsonl.add_lines(encode_row_lines(rows), len(rows))
                if table is not None:
                    table.add_structs(rows)
            if on_item:
                on_item()


def _name(entry: dict[str, Any]) -> str:
    return entry["name"]
