"""runeval on a curated snapshot (annotations.snapshots): frozen content, manifest, auto choice, rejudge."""

import json

from django.core.management import call_command

from annotations.snapshots.services import create_snapshot
from evaluation.models import EvalRun
from scenarios.models import Turn
from tests.annotations.conftest import approve_as_is, make_user


def _run(tmp_path, *args):
    call_command("runeval", *args, "--quiet", "--output", str(tmp_path))
    return json.loads((tmp_path / "summary.json").read_text())


def test_oracle_on_latest_snapshot_then_edits_do_not_leak(sessions, tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    approve_as_is(Turn.objects.filter(session__in=sessions))
    admin = make_user("root", "admin")
    snapshot = create_snapshot(user=admin)
    summary = _run(tmp_path / "a", "--model", "rules:oracle", "--language", "both")  # auto: the snapshot
    assert summary["snapshot"] == snapshot.label
    dataset = summary["manifest"]["dataset"]
    assert dataset["source"] == "snapshot" and dataset["snapshot_id"] == snapshot.pk
    assert dataset["checksum"] == snapshot.content_sha256 and dataset["n_sessions"] == len(sessions)
    for lang in ("en", "zh"):
        assert summary["metrics"][lang]["mRS"]["all"] >= 0.98

    # Editing the live rows after the freeze changes nothing for a snapshot run or its rejudge.
    Turn.objects.filter(session__in=sessions).update(answer_en="edited", request_implicit_en="edited?")
    again = _run(tmp_path / "b", "--model", "rules:oracle", "--snapshot", snapshot.label)
    assert again["metrics"]["en"] == summary["metrics"]["en"]
    rejudged = _run(tmp_path / "c", "--rejudge", str(summary["run_id"]), "--judge", "rules")
    assert rejudged["metrics"] == summary["metrics"]
    assert EvalRun.objects.get(pk=rejudged["run_id"]).rejudge_of_id == summary["run_id"]
