"""Issue 32, item 3, through the services: the answer ↔ evidence gate on a reviewer's draft and on an
adjudicator's direct edit (after the save the call was re-run; the gate still names the step whose
result changed), on a demo-cohort admission with PTT and INR results."""

from __future__ import annotations

from annotations import services
from tests.annotations.conftest import make_user
from tests.annotations.evidence_fixtures import ptt_session


def _stale(warnings: list[dict]) -> list[str]:
    return [w["message"] for w in warnings if w["gate"] == "evidence"]


def test_direct_edit_of_a_gold_call_warns_about_the_stale_answer(demo_cohort):
    _session, turn, value = ptt_session()
    adjudicator = make_user("adj", "adjudicator")
    arguments = {**turn.steps.get(idx=0).arguments, "code": "inr"}
    _, _, warnings = services.save_turn_edit(
        turn=turn, user=adjudicator, changes={"steps": [{"idx": 0, "arguments": arguments}]}, base_version=turn.version
    )
    stale = _stale(warnings)
    assert f"answer: {value} sec is no longer supported by step 0 Observation.search, whose result changed" in stale
    assert "answer: PTT is no longer returned by step 0 Observation.search, whose result changed" in stale


def test_reviewer_draft_gets_the_same_warning_and_an_untouched_turn_none(demo_cohort):
    session, turn, value = ptt_session()
    reviewer = make_user("rev", "reviewer")
    services.assign(session=session, reviewer=reviewer, by=None)
    same = services.save_draft_review(turn=turn, reviewer=reviewer, proposed={"answer_en": turn.answer_en + " "})
    assert _stale(same.gate_warnings) == []
    arguments = {**turn.steps.get(idx=0).arguments, "code": "inr"}
    draft = services.save_draft_review(
        turn=turn, reviewer=reviewer, proposed={"steps": [{"idx": 0, "arguments": arguments}]}
    )
    assert any(f"{value} sec is no longer supported by step 0" in m for m in _stale(draft.gate_warnings))
