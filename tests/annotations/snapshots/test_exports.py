"""Files against the database: PAB round trip through import_pab, JSONL and Parquet read with pyarrow,
byte-identical re-export, export_to's all-or-nothing folder."""

from __future__ import annotations

import json

import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest

from annotations import content as tc
from annotations.snapshots import selectors, services
from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.exporters import parquet as parquet_exporter
from scenarios.models import Session
from scenarios.pab import import_pab_file

pytestmark = pytest.mark.django_db

SESSION_FIELDS = (
    "session_id",
    "subject_id",
    "hadm_id",
    "current_date",
    "env_info",
    "scenario",
    "clinical_task_domain",
    "tier",
    "tool_set",
    "sequence_idx",
    "tools",
    "tools_zh",
    "session_plan",
    "dep_graph",
    "persona",
    "patient_memory",
    "patient_agent_annotations",
    "generated_at",
)


def db_state(record_ids):
    """Everything PAB carries, read from the database (rubric row ids left out: import makes new rows)."""
    out = {}
    for session in Session.objects.filter(record_id__in=record_ids).prefetch_related(
        "turns__steps", "turns__rubric_items"
    ):
        turns = []
        for turn in sorted(session.turns.all(), key=lambda t: t.index):
            content = tc.snapshot(turn=turn)
            for item in content["rubric"]:
                item.pop("id")
            steps = [
                (s.idx, s.tool, s.arguments, s.observation, s.dependency_list)
                for s in sorted(turn.steps.all(), key=lambda s: s.idx)
            ]
            flags = (turn.task_type, turn.is_implicit, turn.tool_source, turn.workup_mode, turn.derivations)
            turns.append((content, steps, flags))
        out[session.record_id] = ({name: getattr(session, name) for name in SESSION_FIELDS}, turns)
    return out


def test_pab_files_read_back_by_import_pab_equal_the_database(curated, people):
    snap = services.create_snapshot(user=people["boss"])
    ids = sorted(snap.items.values_list("record_id", flat=True))
    before = db_state(ids)
    for entry in snap.manifest["files"]:
        if entry["format"] == "pab":
            path = selectors.snapshot_file_path(snapshot=snap, name=entry["name"])
            result = import_pab_file(path=path, replace=True)
            assert result.ok, result.errors
            assert result.replaced == entry["rows"] == 1
    assert Session.objects.filter(record_id__in=ids, source="imported").count() == 2
    assert db_state(ids) == before


def _db_rows():
    rows = {}
    for session in (
        Session.objects.filter(turns__status="approved")
        .distinct()
        .prefetch_related("turns__steps", "turns__rubric_items", "turns__reviews__reviewer")
    ):
        if session.turns.exclude(status="approved").exists():
            continue
        for turn in session.turns.all():
            reviewers = sorted(r.reviewer.username for r in turn.reviews.all() if r.submitted)
            for lang in ("en", "zh"):
                rows[(session.record_id, turn.index, lang)] = {
                    "scenario": session.scenario,
                    "tier": session.tier,
                    "task_type": turn.task_type,
                    "subtype": turn.subtype,
                    "tool_source": turn.tool_source,
                    "request": getattr(turn, f"request_implicit_{lang}"),
                    "request_explicit": getattr(turn, f"request_explicit_{lang}"),
                    "answer": getattr(turn, f"answer_{lang}"),
                    "rubric": [
                        {"text": getattr(r, f"text_{lang}"), "is_safety": r.is_safety}
                        for r in sorted(turn.rubric_items.all(), key=lambda r: r.idx)
                    ],
                    "gold_calls": [
                        {"tool": s.tool, "arguments": s.arguments}
                        for s in sorted(turn.steps.all(), key=lambda s: s.idx)
                    ],
                    "turn_version": turn.version,
                    "reviewers": reviewers,
                }
    return rows


def _pick(row):
    keys = ("scenario", "tier", "task_type", "subtype", "tool_source", "request", "request_explicit", "answer")
    return {k: row[k] for k in keys} | {
        "rubric": row["rubric"],
        "gold_calls": json.loads(row["gold_calls_json"]),
        "turn_version": row["turn_version"],
        "reviewers": row["reviewers"],
    }


def test_jsonl_and_parquet_load_with_pyarrow_and_match_the_database(curated, people):
    snap = services.create_snapshot(user=people["boss"])
    expected = _db_rows()
    assert len(expected) == 16
    jsonl = pajson.read_json(selectors.snapshot_file_path(snapshot=snap, name="turns.jsonl")).to_pylist()
    table = pq.read_table(selectors.snapshot_file_path(snapshot=snap, name="turns.parquet"))
    assert table.schema == parquet_exporter.SCHEMA
    parquet = table.to_pylist()
    for rows in (jsonl, parquet):
        assert len(rows) == 16
        got = {(r["record_id"], r["turn_index"], r["language"]): _pick(r) for r in rows}
        assert got == expected
    # Stable order: byte order of record_id, then turn, then language; Chinese stored as text.
    assert [(r["record_id"], r["turn_index"], r["language"]) for r in parquet] == sorted(expected)
    raw = selectors.snapshot_file_path(snapshot=snap, name="turns.jsonl").read_text(encoding="utf-8")
    assert "最近一次肌酐是多少" in raw and "\\u" not in raw


def test_parquet_has_no_time_in_metadata_and_fixed_row_groups(curated, people, monkeypatch, tmp_path):
    monkeypatch.setattr(parquet_exporter, "ROW_GROUP", 3)
    snap = services.create_snapshot(user=people["boss"])
    parquet_file = pq.ParquetFile(selectors.snapshot_file_path(snapshot=snap, name="turns.parquet"))
    meta = parquet_file.metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [3, 3, 3, 3, 3, 1]
    assert set((meta.metadata or {}).keys()) == {b"ARROW:schema"}
    # Chunking of the input does not matter: rows arrive 16 at once or 1 by 1, same bytes.
    text = selectors.snapshot_file_path(snapshot=snap, name="turns.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    for name, chunks in (("a.parquet", [rows]), ("b.parquet", [[r] for r in rows])):
        writer = parquet_exporter.ParquetRowWriter(path=tmp_path / name)
        for chunk in chunks:
            writer.add_rows(chunk)
        writer.close()
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_export_to_writes_a_complete_folder_or_nothing(curated, people, tmp_path, monkeypatch):
    snap = services.create_snapshot(user=people["boss"])
    out = tmp_path / "export"
    files = services.export_to(snapshot=snap, formats=["jsonl", "parquet"], out=out)
    assert sorted(p.name for p in out.iterdir()) == [
        "SHA256SUMS",
        "card.md",
        "croissant.json",
        "manifest.json",
        "turns.jsonl",
        "turns.parquet",
    ]
    manifest = {f["name"]: f for f in snap.manifest["files"]}
    assert files == [manifest["turns.jsonl"], manifest["turns.parquet"]]
    with pytest.raises(SnapshotError, match="already exists and is not an empty folder"):
        services.export_to(snapshot=snap, formats="all", out=out)
    with pytest.raises(SnapshotError, match="unknown format 'csv'"):
        services.export_to(snapshot=snap, formats=["csv"], out=tmp_path / "x")

    def fail_half_way(**kwargs):
        kwargs["out_dir"].joinpath("turns.jsonl").write_text("half")
        raise OSError("disk full")

    monkeypatch.setattr(services, "export_snapshot", fail_half_way)
    with pytest.raises(OSError):
        services.export_to(snapshot=snap, formats="all", out=tmp_path / "failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "var"]
