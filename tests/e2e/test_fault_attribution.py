"""A physician attributes a failed turn to a task fault in Chromium (issue 38 item 2): the turn reappears in
their review queue, and the run page shows its metrics with and without the task-faulted turn."""

import json

import pytest
from django.core.management import call_command

from annotations import services as review_services
from annotations.models import TurnState
from evaluation.models import EvalRun, TurnResult
from scenarios.models import Turn
from tests.e2e.review_helpers import login, user_with_password
from tests.evaluation.conftest import make_sessions

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_task_fault_sends_the_turn_back_to_review_and_splits_the_metrics(page, live_server, demo_cohort, tmp_path):
    sessions = make_sessions(n=4)
    alice, bob = user_with_password("fe_alice", "reviewer"), user_with_password("fe_bob", "reviewer")
    for session in sessions:
        for reviewer in (alice, bob):
            review_services.assign(session=session, reviewer=reviewer, by=None)
    for turn in Turn.objects.filter(session__in=sessions):
        for reviewer in (alice, bob):
            review_services.submit_review(turn=turn, reviewer=reviewer, decision="approve", base_version=turn.version)
    out = tmp_path / "run"
    call_command("runeval", "--model", "rules:heuristic", "--sessions", "all", "--quiet", "--output", str(out))
    run = EvalRun.objects.get(pk=json.loads((out / "summary.json").read_text())["run_id"])
    result = TurnResult.objects.filter(run=run, score__lt=1).order_by("pk").first()
    turn = Turn.objects.get(session__session_id=result.session_id, index=result.turn_index)
    assert turn.status == TurnState.APPROVED

    login(page, live_server, "fe_alice")
    page.goto(f"{live_server.url}/results/runs/{run.pk}/")
    assert page.locator("#fault-none").is_visible()  # nobody attributed anything yet

    page.goto(f"{live_server.url}/results/runs/{run.pk}/turns/{result.pk}/")
    page.check("input[name=kind][value=task]")
    page.click("#fault-save")  # no part, no note: refused, nothing lost
    page.wait_for_selector("#fault-error")
    page.select_option("#fault-part", "rubric_item")
    page.fill("#fault-note", "The rubric asks for a potassium value the record does not hold.")
    page.click("#fault-save")
    page.wait_for_selector("#fault-message")
    assert "sent back to review" in page.inner_text("#fault-message")
    assert page.input_value("#fault-note").startswith("The rubric asks")  # the saved note stays on screen

    # The turn is pending again in the physician's queue, with the reason as a comment on its review screen.
    page.goto(f"{live_server.url}/review/")
    assert page.locator(f"a[href='/review/turns/{turn.pk}/']").count() >= 1
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    assert "potassium value the record does not hold" in page.content()
    page.wait_for_selector("#approve-btn")

    # The run page: both views, the second without the task-faulted turn.
    page.goto(f"{live_server.url}/results/runs/{run.pk}/")
    all_turns = int(page.inner_text("#fault-metrics tr[data-view=all] td:nth-of-type(1)"))
    kept = int(page.inner_text("#fault-metrics tr[data-view=without_task_faults] td:nth-of-type(1)"))
    assert all_turns - kept == 1
    assert "task 1" in page.inner_text("#fault-counts")
