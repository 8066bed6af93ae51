"""The export's fast path agrees with the plain one: row structs = row dicts, bytes from PostgreSQL = the
stored text, hash-while-writing = hashing the file."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from annotations.snapshots import selectors, services
from annotations.snapshots.exporters import hashed
from annotations.snapshots.rows import decode_flat_source, encode_row, encode_row_lines, flat_row_structs, flat_rows
from tests.annotations.snapshots.test_golden_bytes import _items


@pytest.mark.parametrize("languages", [["en", "zh"], ["zh"], ["en"]])
def test_row_structs_encode_and_convert_like_the_row_dicts(languages):
    for item in _items():
        record = decode_flat_source(item.flat_json)
        dicts = flat_rows(record=record, source=item.source, review=item.review, languages=languages)
        structs = flat_row_structs(record=record, source=item.source, review=item.review, languages=languages)
        assert msgspec.to_builtins(structs) == dicts
        assert encode_row_lines(structs) == b"".join(encode_row(row) + b"\n" for row in dicts)


def test_hashed_file_in_small_blocks_writes_and_hashes_everything(tmp_path, monkeypatch):
    monkeypatch.setattr(hashed, "BLOCK", 1000)
    parts = [(f"line {i} 中文 ".encode() * (i % 50)) + b"\n" for i in range(500)]
    out = hashed.HashedFile(tmp_path / "f.jsonl")
    for part in parts:
        out.write(part)
    done = out.close()
    data = (tmp_path / "f.jsonl").read_bytes()
    assert data == b"".join(parts)
    assert done == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_hashed_file_raises_a_write_error_in_the_caller(tmp_path, monkeypatch):
    monkeypatch.setattr(hashed, "BLOCK", 10)
    out = hashed.HashedFile(tmp_path / "f.jsonl")
    out.handle.close()
    out.handle = (tmp_path / "f.jsonl").open("rb", buffering=0)  # read-only: the helper thread's write fails
    with pytest.raises(OSError):
        out.write(b"x" * 20)
        out.close()


@pytest.mark.django_db
def test_export_items_from_postgresql_are_the_stored_texts(curated, people):
    snap = services.create_snapshot(user=people["boss"])
    plain = list(selectors.iter_items(snapshot=snap))
    fast = list(selectors.iter_export_items(snapshot=snap))
    assert [i.record_id for i in fast] == [i.record_id for i in plain]
    for a, b in zip(plain, fast, strict=True):
        record_json = b.record_json if isinstance(b.record_json, str) else b.record_json.decode("utf-8")
        flat_json = b.flat_json if isinstance(b.flat_json, str) else b.flat_json.decode("utf-8")
        assert (record_json, flat_json, b.review, b.scenario, b.source) == (
            a.record_json,
            a.flat_json,
            a.review,
            a.scenario,
            a.source,
        )
