"""runeval with the built-in baselines and the rules judge, on generated sessions over the demo cohort."""

import json
import re

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import EvalRun, TurnResult
from scenarios.models import GoldStep


def _run(tmp_path, *args):
    out = tmp_path / "out"
    call_command("runeval", *args, "--sessions", "all", "--quiet", "--output", str(out))
    summary = json.loads((out / "summary.json").read_text())
    lines = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    return summary, lines


def test_baselines_rank_as_expected_in_both_languages(sessions, tmp_path):
    scores = {}
    for model in ("rules:oracle", "rules:heuristic", "rules:no-tools"):
        summary, lines = _run(tmp_path / model, "--model", model, "--judge", "rules", "--language", "both")
        assert set(summary["metrics"]) == {"en", "zh"}
        assert len(lines) == 2 * sum(s.turns.count() for s in sessions)
        scores[model] = {lang: m["mRS"]["all"] for lang, m in summary["metrics"].items()}
        for m in summary["metrics"].values():
            assert m["n_items_scored"] > 0 and m["n_items_unscored"] > 0  # items without a form are counted
    for lang in ("en", "zh"):
        assert scores["rules:oracle"][lang] >= 0.98
        assert scores["rules:oracle"][lang] > scores["rules:heuristic"][lang] > scores["rules:no-tools"][lang]


def test_summary_contract_and_trace(sessions, tmp_path):
    summary, lines = _run(tmp_path, "--model", "rules:oracle", "--variant", "both")
    for key in ("run_id", "model", "snapshot", "manifest", "metrics", "slices", "usage", "errors"):
        assert key in summary
    m = summary["metrics"]["en"]
    assert set(m["mRS"]) == {"L1", "L2", "L3", "all"}
    assert set(m["pass_at_turn"]) == set(m["pass_at_session"]) == {"0.6", "0.75"}
    assert m["pass_hat_k"] == {"1": 1.0}
    assert set(summary["slices"]) == {"language", "scenario", "tier", "task_type", "subtype", "tool_source", "variant"}
    assert set(summary["slices"]["variant"]) == {"implicit", "explicit"}
    manifest = summary["manifest"]
    assert manifest["dataset"]["source"] == "db" and len(manifest["dataset"]["checksum"]) == 64
    assert manifest["tool_schema_hash"]["en"] and manifest["judge"]["name"] == "rules"
    write_turn = next(line for line in lines if line["tool_source"] == "write")
    assert write_turn["trace"]["writes"] and write_turn["trace"]["writes"][0]["observation"]["_simulated"] is True
    patient = [line for line in lines if line["trace"]["patient_replies"]]
    gold_patient = GoldStep.objects.filter(tool__startswith="patient.", turn__session__in=sessions).exists()
    assert bool(patient) == gold_patient
    assert all(p["replay"] == "hit" for line in patient for p in line["trace"]["patient_replies"])
    assert all(line["trace"]["end_reason"] == "prepare_to_answer" for line in lines if line["trace"]["n_calls"])


def test_resume_skips_finished_turns_and_gives_the_same_scores(sessions, tmp_path, monkeypatch):
    full, _ = _run(tmp_path / "full", "--model", "rules:heuristic", "--limit", "3")
    run = EvalRun.objects.get(pk=full["run_id"])
    # Simulate a kill: drop the last session's results and mark the run as interrupted.
    last = run.manifest["dataset"]["session_ids"][-1]
    kept = set(TurnResult.objects.filter(run=run).exclude(session_id=last).values_list("pk", flat=True))
    TurnResult.objects.filter(run=run, session_id=last, turn_index__gte=2).delete()
    EvalRun.objects.filter(pk=run.pk).update(status="interrupted")

    from evaluation.agents import rules

    calls = []
    original = rules.HeuristicAgent.respond
    monkeypatch.setattr(
        rules.HeuristicAgent, "respond", lambda self, r: calls.append(r.session.session_id) or original(self, r)
    )
    resumed, _ = _run(tmp_path / "resumed", "--resume", str(run.pk))
    assert set(calls) == {last}  # only the unfinished session was played again
    assert kept <= set(TurnResult.objects.filter(run=run).values_list("pk", flat=True))
    assert resumed["metrics"] == full["metrics"]
    assert EvalRun.objects.get(pk=run.pk).status == "finished"


def test_rejudge_rescores_without_calling_the_model(sessions, tmp_path, monkeypatch):
    first, _ = _run(tmp_path / "a", "--model", "rules:oracle", "--limit", "1")
    from evaluation.agents import rules

    monkeypatch.setattr(rules.OracleAgent, "respond", lambda *a: pytest.fail("model called during rejudge"))
    second, _ = _run(tmp_path / "b", "--rejudge", str(first["run_id"]), "--judge", "rules")
    assert second["run_id"] != first["run_id"]
    assert second["manifest"]["rejudge_of"] == first["run_id"]
    assert second["metrics"] == first["metrics"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "rules:oracle", "--snapshot", "v99"], "v99"),
        (["--model", "rules:nope"], "unknown built-in model"),
        (
            ["--model", "gpt-x", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "H6_NO_SUCH_KEY"],
            "H6_NO_SUCH_KEY",
        ),
        (["--model", "rules:oracle", "--trials", "0"], "--trials"),
        (["--resume", "999999"], "no evaluation run 999999"),
    ],
)
def test_clear_errors_before_any_work(sessions, tmp_path, args, message):
    before = EvalRun.objects.count()
    with pytest.raises(CommandError, match=message):
        call_command("runeval", *args, "--sessions", "all", "--quiet", "--output", str(tmp_path))
    assert EvalRun.objects.count() == before


def test_unreachable_endpoint(sessions, tmp_path, monkeypatch):
    monkeypatch.setenv("H6_KEY", "sk-test")
    with pytest.raises(CommandError, match="unreachable"):
        call_command(
            "runeval",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--api-key-env",
            "H6_KEY",
            "--sessions",
            "all",
            "--quiet",
            "--output",
            str(tmp_path),
        )
    assert not EvalRun.objects.exists()


def test_no_approved_sessions_is_an_error(sessions, tmp_path):
    with pytest.raises(CommandError, match="--sessions all"):
        call_command("runeval", "--model", "rules:oracle", "--snapshot", "none", "--quiet")


def test_live_patient_answers_from_the_record_and_is_recorded_as_live(sessions, tmp_path):
    summary, lines = _run(tmp_path, "--model", "rules:oracle", "--language", "both", "--live-patient")
    assert summary["manifest"]["parameters"]["live_patient"] is True
    replies = [reply for line in lines for reply in line["trace"]["patient_replies"]]
    assert replies, "the oracle's gold calls ask the patient"
    assert {r["replay"] for r in replies} == {"live"}
    assert all(r["observation"].get("resourceType") == "PatientAnswer" for r in replies)
    # Only the patient's words reach the model, as in replay: no memory facts, persona or withheld flag.
    assert all(set(r["observation"]) == {"resourceType", "language", "answer"} for r in replies)
    assert all(str(r["observation"].get("answer", "")).strip() for r in replies)
    assert all(line["trace"]["replay_misses"] == 0 for line in lines)
    zh = [r for line in lines if line["language"] == "zh" for r in line["trace"]["patient_replies"]]
    assert zh and any(re.search(r"[\u4e00-\u9fff]", str(r["observation"]["answer"])) for r in zh)
    replayed, _ = _run(tmp_path / "replayed", "--model", "rules:oracle", "--language", "both")
    assert replayed["manifest"]["parameters"]["live_patient"] is False
