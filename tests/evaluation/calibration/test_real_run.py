"""Calibration over a real runeval run (rules judge) and an LLM-free rejudge of it: real traces render
blind, and grades line up with both runs' verdicts."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.calibration import services, stats
from evaluation.calibration.compiled import COMPILED_JUDGE
from evaluation.models import EvalRun


def test_sample_grade_and_agree_on_a_real_run(sessions, tmp_path, client, physicians):
    out = tmp_path / "out"
    call_command(
        "runeval", "--model", "rules:heuristic", "--sessions", "all", "--limit", "2", "--quiet", "--output", str(out)
    )
    run = EvalRun.objects.get(pk=json.loads((out / "summary.json").read_text())["run_id"])
    call_command("runeval", "--rejudge", str(run.pk), "--quiet", "--output", str(tmp_path / "re"))
    rejudge = EvalRun.objects.get(rejudge_of=run)
    sample = services.draw_sample(name="real", run_ids=[run.pk, rejudge.pk], per_stratum=2, seed=0)
    assert sample.items.exists()
    client.force_login(physicians["reviewer"])
    for item in sample.items.select_related("turn_result"):
        tr = item.turn_result
        url = reverse("evaluation:calibration_grade", kwargs={"pk": sample.pk, "turn_result": tr.pk})
        html = client.get(url).content.decode()
        for verdict in tr.verdicts:
            if verdict["reason"]:
                assert verdict["reason"] not in html.split("<main>")[1]
        verdict = next(v for v in tr.verdicts if v["idx"] == item.item)
        label = {True: "pass", False: "fail", None: "unsure"}[verdict["passed"] if verdict["scored"] else None]
        save = reverse("evaluation:calibration_save", kwargs={"pk": sample.pk, "turn_result": tr.pk})
        assert "banner-ok" in client.post(save, {"item": item.item, "label": label}).content.decode()
    report = stats.agreement_report()
    # The physician graded exactly as the rules judge did: both runs (same judge) agree fully.
    # (the rules judge on the items' compiled wording comes second: the generator's checks are compiled to certify it)
    assert [j.judge for j in report.judges] == ["rules", COMPILED_JUDGE]
    assert report.judges[0].overall.percent == pytest.approx(1.0)
    assert report.judges[0].runs == [run.pk]
