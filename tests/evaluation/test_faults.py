"""Physician fault attribution (issue 38 item 2): services, blind views, reopening and the run's two views.

Cases follow the issue and tau2-bench's review categories (user-simulator error, unpassable or wrongly annotated
task, model error): a turn attributed to a task fault goes back to review with its reviewers' decisions removed
and recorded; the run's metrics are shown with and without task-faulted turns; each physician sees only their own.
"""

import json

import pytest
from django.core.management import call_command

from annotations import services as review_services
from annotations.models import Comment, Review, Revision, TurnState
from evaluation import faults
from evaluation.models import EvalRun, FaultAttribution, TurnResult
from scenarios.models import Turn
from tests.annotations.conftest import make_user


@pytest.fixture
def reviewed_run(sessions, tmp_path):
    """Every session assigned to two reviewers who approved every turn; a heuristic run on them (both languages)."""
    alice, bob = make_user("fa_alice", "reviewer"), make_user("fa_bob", "reviewer")
    for session in sessions:
        for reviewer in (alice, bob):
            review_services.assign(session=session, reviewer=reviewer, by=None)
    for turn in Turn.objects.filter(session__in=sessions):
        for reviewer in (alice, bob):
            review_services.submit_review(turn=turn, reviewer=reviewer, decision="approve", base_version=turn.version)
    assert set(Turn.objects.filter(session__in=sessions).values_list("status", flat=True)) == {TurnState.APPROVED}
    out = tmp_path / "run"
    call_command(
        "runeval",
        "--model",
        "rules:heuristic",
        "--language",
        "both",
        "--sessions",
        "all",
        "--quiet",
        "--output",
        str(out),
    )
    run = EvalRun.objects.get(pk=json.loads((out / "summary.json").read_text())["run_id"])
    return run, alice, bob


def _failed(run):
    return TurnResult.objects.filter(run=run, score__lt=1).order_by("pk").first()


def test_a_task_fault_reopens_the_turn_and_leaves_it_out_of_the_second_view(reviewed_run):
    run, alice, bob = reviewed_run
    result = _failed(run)
    assert result is not None, "the heuristic model should fail some turn"
    before = faults.fault_summary(run=run)
    assert before["attributed_results"] == 0

    saved = faults.attribute_fault(
        result=result,
        physician=alice,
        kind="task",
        task_part="rubric_item",
        note="Item 2 asks for a value not in the record.",
    )
    assert saved.reopened
    turn = Turn.objects.get(session__session_id=result.session_id, index=result.turn_index)
    assert turn.status == TurnState.IN_REVIEW and not Review.objects.filter(turn=turn).exists()
    revision = Revision.objects.filter(turn=turn, field="status").latest("pk")
    assert (
        revision.after == TurnState.IN_REVIEW
        and "fa_alice: approve" in revision.reason
        and "fa_bob: approve" in revision.reason
    )
    assert Comment.objects.filter(turn=turn, text__contains="Item 2 asks").exists()
    # The turn is back in both reviewers' queues.
    for reviewer in (alice, bob):
        assert review_services.submit_review(
            turn=turn, reviewer=reviewer, decision="approve", base_version=turn.version
        )

    summary = faults.fault_summary(run=run)
    same_turn = TurnResult.objects.filter(run=run, session_id=result.session_id, turn_index=result.turn_index)
    assert same_turn.count() == 2  # EN and ZH: a task fault leaves out the task in every language
    assert summary["all"]["turns"] - summary["without_task_faults"]["turns"] == same_turn.exclude(score=None).count()
    assert summary["counts"] == {"model": 0, "simulator": 0, "task": 1} and summary["task_faulted_turns"] == 1


def test_model_and_simulator_faults_reopen_nothing_and_give_the_simulator_rate(reviewed_run):
    run, alice, bob = reviewed_run
    first, second = TurnResult.objects.filter(run=run).order_by("pk")[:2]
    faults.attribute_fault(result=first, physician=alice, kind="model")
    faults.attribute_fault(
        result=second, physician=alice, kind="simulator", note="The replayed patient denied the allergy."
    )
    faults.attribute_fault(result=second, physician=bob, kind="model")
    assert set(Turn.objects.values_list("status", flat=True)) == {TurnState.APPROVED}
    summary = faults.fault_summary(run=run)
    assert summary["simulator_fault_rate"] == 0.5  # of 2 attributed results, 1 has a simulator attribution
    assert summary["all"] == summary["without_task_faults"]


def test_the_run_api_carries_both_views_and_the_simulator_rate(reviewed_run, client):
    """A model developer reading the run over the API gets what the run page shows (summary.json predates it)."""
    run, alice, _bob = reviewed_run
    url = f"/api/runs/{run.pk}/"
    client.force_login(alice)
    assert client.get(url).json()["faults"] == {"attributed_results": 0, "judge": run.judge, "tau": 0.75}
    result = _failed(run)
    faults.attribute_fault(
        result=result, physician=alice, kind="task", task_part="rubric_item", note="Item 2 is vague."
    )
    body = client.get(url).json()["faults"]
    assert body == json.loads(json.dumps(faults.fault_summary(run=run)))
    assert body["counts"]["task"] == 1 and body["all"]["turns"] > body["without_task_faults"]["turns"]


@pytest.mark.parametrize(
    ("kind", "part", "note", "needle"),
    [
        ("", "", "", "Choose whose fault"),
        ("judge", "", "", "Choose whose fault"),
        ("task", "", "why", "what is wrong with the task"),
        ("task", "gold_call", "  ", "needs a note"),
    ],
)
def test_incomplete_attributions_are_refused_and_store_nothing(reviewed_run, kind, part, note, needle):
    run, alice, _bob = reviewed_run
    with pytest.raises(faults.FaultError) as caught:
        faults.attribute_fault(result=_failed(run), physician=alice, kind=kind, task_part=part, note=note)
    assert needle in str(caught.value)
    assert not FaultAttribution.objects.exists()


def test_the_form_is_blind_and_keeps_typed_text_on_error(reviewed_run, client):
    run, alice, bob = reviewed_run
    result = _failed(run)
    faults.attribute_fault(result=result, physician=alice, kind="simulator", note="ALICE-ONLY note")
    url = f"/results/runs/{run.pk}/turns/{result.pk}/"
    client.force_login(bob)
    page = client.get(url).content.decode()
    assert 'id="fault-form"' in page and "ALICE-ONLY" not in page
    response = client.post(
        url + "fault/", {"kind": "task", "task_part": "", "note": "Bob typed this"}, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert response.status_code == 200 and "what is wrong with the task" in body and "Bob typed this" in body
    client.force_login(alice)
    assert "ALICE-ONLY note" in client.get(url).content.decode()


def test_a_reviewer_not_assigned_to_the_session_cannot_attribute(reviewed_run, client):
    run, _alice, _bob = reviewed_run
    outsider = make_user("fa_outsider", "reviewer")
    client.force_login(outsider)
    result = _failed(run)
    response = client.post(f"/results/runs/{run.pk}/turns/{result.pk}/fault/", {"kind": "model"})
    assert response.status_code == 404 and not FaultAttribution.objects.exists()
