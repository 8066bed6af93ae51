"""``export_pab``: filters, arguments, atomic write (temporary file renamed), streaming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scenarios.models import Session
from scenarios.pab import export_pab, import_pab_file
from tests.scenarios.factories import complete_session
from tests.scenarios.pab_helpers import SAMPLE

pytestmark = pytest.mark.django_db


@pytest.fixture
def sessions() -> None:
    import_pab_file(path=SAMPLE)  # med_safety tier 2, diagnostic_workup tier 3, discharge_planning tier 1
    complete_session(record_id="gen_a", scenario="med_safety", tier=1, status="approved")
    complete_session(record_id="gen_b", scenario="treatment_response", tier=3, status="rejected_by_gate")


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    "args,expected",
    [
        ([], ["diagnostic_workup_3", "discharge_planning_7", "gen_a", "gen_b", "med_safety_0"]),
        (["--scenario", "med_safety"], ["gen_a", "med_safety_0"]),
        (["--scenario", "med_safety", "treatment_response"], ["gen_a", "gen_b", "med_safety_0"]),
        (["--tier", "1"], ["discharge_planning_7", "gen_a"]),
        (["--tier", "2", "3"], ["diagnostic_workup_3", "gen_b", "med_safety_0"]),
        (["--status", "approved", "rejected_by_gate"], ["gen_a", "gen_b"]),
        (["--scenario", "med_safety", "--tier", "1", "--status", "approved"], ["gen_a"]),
        (["--status", "draft", "--tier", "3"], ["diagnostic_workup_3"]),
        (["--scenario", "discharge_planning", "--tier", "3"], []),
    ],
)
def test_filters(sessions, tmp_path: Path, args: list[str], expected: list[str]) -> None:
    out = tmp_path / "out.jsonl"
    call_command("export_pab", "--out", str(out), "--quiet", *args)
    assert _ids(out) == expected


def test_summary_line(sessions, tmp_path: Path, capsys) -> None:
    call_command("export_pab", "--out", str(tmp_path / "o.jsonl"), "--scenario", "med_safety")
    assert f"2 session(s) written to {tmp_path / 'o.jsonl'}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--scenario", "oncology"], "unknown scenario(s): oncology"),
        (["--tier", "4"], "unknown tier(s): 4 (tiers are 1, 2, 3)"),
        # issue 36 F11: exited 0 with an empty file
        (["--status", "nope"], "unknown status(es): nope (known: draft, rejected_by_gate)"),
    ],
)
def test_bad_filters(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(CommandError) as exc:
        call_command("export_pab", "--out", str(out), "--quiet", *args)
    assert message in str(exc.value)
    assert list(tmp_path.iterdir()) == []


def test_missing_output_folder(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such directory"):
        call_command("export_pab", "--out", str(tmp_path / "nope" / "out.jsonl"), "--quiet")


def test_failure_half_way_leaves_the_old_file_and_no_temporary(sessions, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("previous export\n", encoding="utf-8")
    written = []

    def serialize(session: Session) -> str:
        if len(written) == 2:
            raise RuntimeError("disk on fire")
        written.append(session.record_id)
        return "{}"

    with pytest.raises(RuntimeError, match="disk on fire"):
        export_pab(out=out, serialize=serialize)

    assert written == ["diagnostic_workup_3", "discharge_planning_7"]
    assert out.read_text(encoding="utf-8") == "previous export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_success_replaces_the_file_atomically(sessions, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("previous export\n", encoding="utf-8")
    result = export_pab(out=out, tiers=[1])
    assert (result.sessions, _ids(out)) == (2, ["discharge_planning_7", "gen_a"])
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
    assert out.stat().st_mode & 0o777 == 0o644


def test_export_streams_with_a_bounded_number_of_queries(
    sessions, tmp_path: Path, django_assert_max_num_queries, monkeypatch
) -> None:
    from scenarios.pab import services

    monkeypatch.setattr(services, "EXPORT_CHUNK", 2)  # 5 sessions → 3 chunks
    # count + per chunk: sessions, turns, steps, rubric items (no query per session or per turn)
    with django_assert_max_num_queries(1 + 3 * 4):
        result = export_pab(out=tmp_path / "out.jsonl")
    assert result.sessions == 5


def test_empty_export_writes_an_empty_file(tmp_path: Path) -> None:
    result = export_pab(out=tmp_path / "empty.jsonl")
    assert result.sessions == 0
    assert (tmp_path / "empty.jsonl").read_bytes() == b""


def test_order_is_bytewise_on_every_database(tmp_path: Path) -> None:
    ids = ["ab", "a_b", "B1", "a-c", "a1", "med_safety_10", "med_safety_2"]
    for record_id in ids:
        complete_session(record_id=record_id)
    export_pab(out=tmp_path / "o.jsonl")
    assert _ids(tmp_path / "o.jsonl") == sorted(ids)  # Python's sort is by code point, like C collation


def test_a_status_in_use_is_known(sessions, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"unknown status\(es\): nope \(known: approved, draft, rejected_by_gate\)"):
        call_command("export_pab", "--out", str(tmp_path / "o.jsonl"), "--quiet", "--status", "nope", "approved")
