"""`manage.py demo --no-serve` end to end: users, sessions, assignments, the pre-review, idempotence."""

from collections import Counter

from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotations.models import Adjudication, Assignment, Chosen, Guideline, Review, Revision, RevisionKind, TurnState
from annotations.selectors import adjudication_queue, review_queue
from ehr.mimic_tables import TABLES
from physreview import demo
from scenarios.models import Session, SessionStatus, Turn
from tests.scenarios.contract import contract_problems


def _counts() -> dict[str, int]:
    return {name: spec.model.objects.count() for name, spec in TABLES.items()}


def _review_state() -> tuple:
    """Everything the pre-review writes, to compare two runs."""
    return (
        sorted(Review.objects.values_list("pk", "turn_id", "reviewer_id", "decision", "updated", "submitted_at")),
        sorted(Revision.objects.values_list("pk", "turn_id", "field", "kind")),
        sorted(Adjudication.objects.values_list("pk", "turn_id", "chosen", "decision", "version")),
        sorted(Assignment.objects.values_list("pk", "session_id", "reviewer_id")),
        sorted(Turn.objects.values_list("pk", "status", "version")),
        sorted(Guideline.objects.values_list("pk", "language", "updated")),
        sorted(get_user_model().objects.values_list("pk", "username", "password")),
    )


def _password(out: str, username: str) -> str:
    line = next(line for line in out.splitlines() if f"username: {username} " in line)
    return line.rsplit("password: ", 1)[1].strip()


def test_demo_no_serve_is_idempotent_prints_logins_and_pre_reviews(demo_cohort, settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    call_command("demo", "--no-serve", "--quiet")
    first_counts = _counts()
    first_state = _review_state()
    first_out = capsys.readouterr().out
    call_command("demo", "--no-serve", "--quiet")
    second_out = capsys.readouterr().out

    # Running it twice changes nothing the second time.
    assert _counts() == first_counts
    assert _review_state() == first_state
    assert first_out == second_out

    # Every scenario × tier has generated sessions, made once (the second run only checks).
    sessions = Session.objects.all()
    assert sessions.count() == 48
    assert {(s.scenario, s.tier) for s in sessions} == {
        (sc, t)
        for sc in ("diagnostic_workup", "med_safety", "treatment_response", "discharge_planning")
        for t in (1, 2, 3)
    }
    assert first_counts["patients"] > 0 and first_counts["labevents"] > 0
    # All 48 passed every gate at the first attempt, with gold calls in the released tool contract only.
    assert not sessions.filter(status=SessionStatus.REJECTED_BY_GATE).exists()
    assert {(s.gate_report["attempts"], len(s.gate_report["failures"])) for s in sessions} == {(1, 0)}
    for session in sessions:
        turns = session.turns.prefetch_related("steps", "rubric_items")
        steps = [(t.index, s.tool, s.arguments, s.observation) for t in turns for s in t.steps.all()]
        checks = [r.machine_check for t in turns for r in t.rubric_items.all()]
        assert (
            contract_problems(
                session_id=session.session_id,
                subject_id=session.subject_id,
                hadm_id=session.hadm_id,
                current_date=session.current_date,
                steps=steps,
                checks=checks,
            )
            == []
        )

    # Printed credentials work; one line per demo user with the right role.
    users = get_user_model().objects
    for username, role in demo.DEMO_USERS:
        user = users.get(username=username)
        assert user.check_password(_password(first_out, username))
        assert user.groups.filter(name=role).exists()
    assert users.get(username="demo_admin").is_superuser
    assert not users.get(username="demo_reviewer").is_staff

    # Both reviewers on every session, balanced (48 each), through services.distribute.
    r1, r2 = users.get(username="demo_reviewer"), users.get(username="demo_reviewer2")
    for session in sessions:
        assert set(session.assignments.values_list("reviewer__username", flat=True)) == {r1.username, r2.username}
    assert Counter(Assignment.objects.values_list("reviewer__username", flat=True)) == {
        r1.username: 48,
        r2.username: 48,
    }

    # The planned review state, session by session (positions by run_index).
    ordered = list(Session.objects.order_by("run_index"))
    for position, session in enumerate(ordered):
        statuses = set(session.turns.values_list("status", flat=True))
        if position in demo.FULLY_REVIEWED:
            assert statuses <= {TurnState.APPROVED, TurnState.REJECTED}, (position, statuses)
        elif position in demo.AWAITING_ADJUDICATION:
            assert session.turns.filter(status=TurnState.NEEDS_ADJUDICATION).count() == 1, position
        else:
            assert statuses == {TurnState.IN_REVIEW}, (position, statuses)
    plan = [step for p, s in enumerate(ordered) for step in demo.review_plan(p, s.turns.count())]
    reviews = Review.objects.all()
    assert reviews.count() == sum(step.who != "adjudicate" for step in plan)
    assert Adjudication.objects.count() == sum(step.who == "adjudicate" for step in plan) >= 10
    # Everything the demo wrote is marked as demo data and submitted.
    assert not reviews.filter(is_demo=False).exists() and not reviews.filter(submitted_at=None).exists()
    assert not Adjudication.objects.filter(is_demo=False).exists()
    assert set(Adjudication.objects.values_list("adjudicator__username", flat=True)) == {"demo_adjudicator"}

    # Every screen has something: adjudicated content, merged edits, rejections with reasons, a queue.
    assert Adjudication.objects.filter(chosen=Chosen.MERGED).exists()
    assert Adjudication.objects.filter(decision="reject").exclude(reject_reason="").exists()
    assert Revision.objects.filter(kind=RevisionKind.ADJUDICATION).exists()
    rejected = Turn.objects.filter(status=TurnState.REJECTED)
    assert rejected.count() >= 2
    for turn in rejected:
        assert turn.reviews.filter(decision="reject").exclude(reject_reason="").exclude(reason="").exists()
    assert adjudication_queue().count() == 8
    assert review_queue(user=r1).count() == 16 * 4
    assert review_queue(user=r2).count() == 16 * 4 - 8 * 2
    assert set(Guideline.objects.values_list("language", flat=True)) == {"en", "zh-hans"}

    # The printed summary matches the database.
    assert "24 sessions fully reviewed" in first_out
    assert "8 sessions with turns in the adjudication queue: 8 turns" in first_out
    assert "16 sessions pending review: 64 turns" in first_out
