"""`manage.py generate`: slots spread over scenario × tier, stored sessions, idempotency, resume."""

from collections import Counter
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from scenarios import services
from scenarios.models import GenerationRun, GoldStep, RubricItem, RunStatus, Session, Turn

RUBRIC_COUNTS = {"IL": {3}, "DG": {4, 5}, "CR": {5, 6}, "WU": {5, 6}}


def generate(*args: str) -> str:
    out = StringIO()
    call_command("generate", *args, "--quiet", stdout=out)
    return out.getvalue()


def test_twelve_sessions_cover_every_scenario_and_tier_with_complete_turns(demo_cohort):
    out = generate("--scenario", "all", "--tier", "all", "--n", "12", "--backend", "rules", "--seed", "1")
    run = GenerationRun.objects.get()
    assert "12 made, 0 rejected by gate" in out
    assert (run.status, run.made, run.rejected_by_gate, run.errors) == (RunStatus.FINISHED, 12, 0, [])
    sessions = list(Session.objects.filter(run=run))
    assert Counter((s.scenario, s.tier) for s in sessions) == {
        (scenario, tier): 1 for scenario in services.ALL_SCENARIOS for tier in (1, 2, 3)
    }
    assert {s.status for s in sessions} == {"draft"}
    turns = Turn.objects.filter(session__run=run)
    assert turns.count() == 48
    for turn in turns:
        texts = (turn.request_explicit_en, turn.request_implicit_en, turn.request_explicit_zh, turn.request_implicit_zh)
        assert all(t.strip() for t in texts), turn
        assert turn.answer_en.strip() and turn.answer_zh.strip()
        steps = list(GoldStep.objects.filter(turn=turn))
        assert steps[-1].tool == "prepare_to_answer"
        assert all(s.observation not in (None, {}, "") and "error" not in s.observation for s in steps[:-1])
        assert RubricItem.objects.filter(turn=turn).count() in RUBRIC_COUNTS[turn.task_type]
    # The agentic patient is stored with the session, and its gold answers are kept for replay.
    patient_session = next(s for s in sessions if s.patient_agent_annotations)
    assert patient_session.persona["info_completeness"] in {"full", "partial", "critical_withheld"}
    assert patient_session.patient_memory["facts"]
    assert {"en", "zh"} <= set(patient_session.patient_agent_annotations[0]["answers"])


def test_a_slot_is_generated_once_however_often_it_runs(demo_cohort):
    run = services.create_run(backend="rules", seed=3, scenarios=["med_safety"], tiers=[2], n=2)
    first = services.generate_slot(run_id=run.pk, index=0)
    again = services.generate_slot(run_id=run.pk, index=0)
    assert first.pk == again.pk
    assert Session.objects.filter(run=run).count() == 1
    assert Turn.objects.filter(session=first).count() == 4


def test_resume_finishes_an_interrupted_run_without_duplicates(demo_cohort):
    run = services.create_run(backend="rules", seed=5, scenarios=list(services.ALL_SCENARIOS), tiers=[1, 2, 3], n=8)
    for index in (0, 3, 4):
        services.generate_slot(run_id=run.pk, index=index)
    services.mark_run(run_id=run.pk, status=RunStatus.INTERRUPTED)
    out = generate("--resume", str(run.pk))
    assert "(5 to make)" in out
    assert sorted(Session.objects.filter(run=run).values_list("run_index", flat=True)) == list(range(8))
    run.refresh_from_db()
    assert (run.status, run.made) == (RunStatus.FINISHED, 8)


def test_same_seed_gives_byte_identical_exports(demo_cohort, tmp_path):
    args = ("--scenario", "med_safety,discharge_planning", "--tier", "1,3", "--n", "4", "--seed", "11")
    generate(*args)
    call_command("export_pab", "--out", str(tmp_path / "a.jsonl"), "--quiet")
    Session.objects.all().delete()
    GenerationRun.objects.all().delete()
    generate(*args)
    call_command("export_pab", "--out", str(tmp_path / "b.jsonl"), "--quiet")
    first = (tmp_path / "a.jsonl").read_bytes()
    assert first and first == (tmp_path / "b.jsonl").read_bytes()


def test_the_same_seed_twice_is_refused_with_the_run_to_resume(demo_cohort):
    generate("--scenario", "med_safety", "--tier", "1", "--n", "1", "--seed", "2")
    run = GenerationRun.objects.get()
    with pytest.raises(CommandError, match=rf"already exists \(run {run.pk}\); use --resume {run.pk}"):
        generate("--scenario", "med_safety", "--tier", "1", "--n", "1", "--seed", "2")
    assert Session.objects.count() == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--scenario", "surgery"), "unknown value"),
        (("--tier", "4"), "unknown value"),
        (("--tier", "one"), "expected 'all' or a comma-separated list"),
        (("--n", "0"), "--n must be at least 1"),
        (("--n", "100000000"), "--n 100000000: at most 10,000 sessions per run"),  # issue 36 F11
        (("--resume", "999999"), "no such generation run"),
    ],
)
def test_bad_arguments_are_command_errors(db, args, message):
    with pytest.raises(CommandError, match=message):
        generate(*args)
    assert not Session.objects.exists()
