"""A reviewer's edit re-runs the single-turn quality gates on a generated session."""

import pytest

from annotations import services
from scenarios import services as scenario_services


@pytest.fixture
def generated(demo_cohort, reviewers, admin_user):
    run = scenario_services.create_run(backend="rules", seed=1, scenarios=["med_safety"], tiers=[1], n=1)
    session = scenario_services.generate_slot(run_id=run.pk, index=0)
    assert session.status == "draft"
    services.assign(session=session, reviewer=reviewers[0], by=admin_user)
    return session


def test_unchanged_generated_turns_have_no_warnings(generated, reviewers):
    for turn in generated.turns.all():
        review = services.save_draft_review(turn=turn, reviewer=reviewers[0])
        assert review.gate_warnings == [], (turn.index, review.gate_warnings)


def test_edit_with_an_ungrounded_number_warns(generated, reviewers):
    turn = generated.turns.get(index=0)
    answer = turn.answer_en.replace("5 mg", "7.5 mg")
    assert answer != turn.answer_en
    _, warnings = services.submit_review(
        turn=turn, reviewer=reviewers[0], decision="approve", proposed={"answer_en": answer}, base_version=1
    )
    gates = {w["gate"] for w in warnings}
    assert {"numbers", "translation"} <= gates, warnings
    assert any("7.5" in w["message"] for w in warnings)


def test_subtype_edit_is_checked(generated, reviewers):
    turn = generated.turns.get(index=1)  # a PE turn ("Apixaban adherence?")
    review = services.save_draft_review(
        turn=turn,
        reviewer=reviewers[0],
        proposed={
            "request_implicit_en": "Please check, in full detail, how "
            "the patient takes apixaban at home and what the order says."
        },
    )
    assert any(w["gate"] == "subtype" for w in review.gate_warnings), review.gate_warnings


def test_edited_tool_arguments_are_re_executed(generated, reviewers, adjudicator):
    turn = generated.turns.get(index=0)
    step = turn.steps.get(idx=0)
    assert step.tool == "MedicationRequest.search"
    args = {**step.arguments, "medication": "no-such-drug-xyz"}
    review = services.save_draft_review(
        turn=turn, reviewer=reviewers[0], proposed={"steps": [{"idx": 0, "arguments": args}]}
    )
    assert any(w["gate"] == "tool_result" and "step 0" in w["message"] for w in review.gate_warnings)
    step.refresh_from_db()
    assert step.arguments["medication"] == "apixaban"  # a review never touches the turn

    services.save_turn_edit(
        turn=turn, user=adjudicator, changes={"steps": [{"idx": 0, "arguments": args}]}, base_version=1
    )
    step.refresh_from_db()
    assert step.arguments["medication"] == "no-such-drug-xyz"
    assert "apixaban" not in str(step.observation).lower()  # the stored observation is the new call's
