"""Each quality gate catches its planted defect in an otherwise passing draft; the driver rejects
what keeps failing and says why."""

from __future__ import annotations

import copy

import pytest

from scenarios.generation import check_session, generate_session
from scenarios.generation.types import SessionDraft
from tests.scenarios.test_generation_sessions import outcome, record_patient


def _draft(scenario: str = "med_safety", tier: int = 2) -> SessionDraft:
    result = outcome(scenario, tier)
    assert result.status == "passed"
    return copy.deepcopy(result.draft)


def _gates(draft: SessionDraft) -> set[str]:
    return {f.gate for f in check_session(draft)}


def test_number_not_in_any_observation(demo_cohort):
    draft = _draft()
    turn = draft.turns[2]
    turn.answer_en += " The estimated level is 987.6 mg/dL."
    turn.answer_zh += " 估计水平为 987.6 mg/dL。"
    failures = check_session(draft)
    assert [(f.gate, f.turn) for f in failures] == [("numbers", 2)]
    assert "987.6" in failures[0].message


def test_trailing_zero_is_not_a_new_number(demo_cohort):
    draft = _draft()
    turn = draft.turns[0]
    value = next(r.check["value"] for r in turn.rubric if (r.check or {}).get("kind") == "value_unit")
    turn.answer_en += f" (that is {float(value):.2f})"
    turn.answer_zh += f"（即 {float(value):.2f}）"
    assert check_session(draft) == []


def test_translated_tool_name(demo_cohort):
    draft = _draft("med_safety", 3)
    turn = next(t for t in draft.turns if t.task_type == "WU")
    tool = turn.steps[0].tool
    item = next(r for r in turn.rubric if tool in r.text_en)  # "Calls Flag.create" (answers name no tool)
    item.text_zh = item.text_zh.replace(tool, "标记.创建")
    assert _gates(draft) == {"tool_names"}


def test_missing_unit_in_chinese(demo_cohort):
    draft = _draft()
    turn = next(t for t in draft.turns if "mg/dL" in t.answer_zh or "mEq/L" in t.answer_zh)
    unit = "mg/dL" if "mg/dL" in turn.answer_zh else "mEq/L"
    turn.answer_zh = turn.answer_zh.replace(unit, "毫克/分升")
    failures = check_session(draft)
    # The Chinese answer no longer carries the value with its unit either: it fails its own value check.
    assert {f.gate for f in failures} == {"translation", "self_rubric"}
    assert unit in failures[0].message


def test_missing_number_in_chinese(demo_cohort):
    draft = _draft()
    rubric = next(r for t in draft.turns for r in t.rubric if any(c.isdigit() for c in r.text_en))
    rubric.text_zh = "".join(c for c in rubric.text_zh if not c.isdigit())
    assert "translation" in _gates(draft)


def test_empty_ehr_result(demo_cohort):
    draft = _draft()
    draft.turns[1].steps[0].observation = {"resourceType": "Bundle", "type": "searchset", "total": 0, "entry": []}
    assert "tool_result" in _gates(draft)


def test_ehr_error_result(demo_cohort):
    draft = _draft()
    draft.turns[0].steps[0].observation = {"error": "unknown code", "hint": "..."}
    assert "tool_result" in _gates(draft)


def test_wrong_rubric_count(demo_cohort):
    draft = _draft()
    draft.turns[0].rubric.pop()
    failures = check_session(draft)
    assert [(f.gate, f.turn) for f in failures] == [("rubric_count", 0)]


def test_invalid_rubric_check_shape(demo_cohort):
    draft = _draft()
    draft.turns[0].rubric[0].check = {"kind": "value_unit", "value": "high"}
    assert "rubric" in _gates(draft)


def test_il_with_two_calls(demo_cohort):
    draft = _draft()
    turn = draft.turns[0]
    turn.steps.insert(0, copy.deepcopy(turn.steps[0]))
    assert "tool_count" in _gates(draft)


def test_wu_without_write(demo_cohort):
    draft = _draft("med_safety", 3)
    turn = next(t for t in draft.turns if t.task_type == "WU")
    turn.steps[0].tool = "Observation.search"
    assert "tool_count" in _gates(draft)


def test_arc_breaking_protocol(demo_cohort):
    draft = _draft()
    draft.turns[0].task_type = "CR"
    assert "arc" in _gates(draft)


def test_na_without_antecedent(demo_cohort):
    draft = _draft()
    turn = draft.turns[1]
    turn.subtype = "NA"
    turn.entity = "something never mentioned"
    assert "subtype" in _gates(draft)


def test_turn_zero_must_be_explicit(demo_cohort):
    draft = _draft()
    draft.turns[0].subtype = "PE"
    draft.turns[0].is_implicit = True
    assert "subtype" in _gates(draft)


def test_observation_after_cutoff(demo_cohort):
    draft = _draft()
    step = draft.turns[0].steps[0]
    later = f"{int(draft.current_date[:4]) + 1}{draft.current_date[4:]} 08:00:00"
    step.observation = copy.deepcopy(step.observation)
    step.observation.setdefault("entry", [{"resource": {}}])[0]["resource"]["effectiveDateTime"] = later
    assert "date_cutoff" in _gates(draft)


def test_observation_charted_on_the_current_date(demo_cohort):
    """The cutoff: a record charted on the current date itself (04:52) is not visible yet."""
    draft = _draft()
    step = draft.turns[0].steps[0]
    step.observation = copy.deepcopy(step.observation)
    step.observation.setdefault("entry", [{"resource": {}}])[0]["resource"]["effectiveDateTime"] = (
        f"{draft.current_date} 04:52:00"
    )
    failures = [f for f in check_session(draft) if f.gate == "date_cutoff"]
    assert failures and f">= {draft.current_date}" in failures[0].message


def test_gold_call_outside_the_contract(demo_cohort):
    draft = _draft()
    step = draft.turns[0].steps[0]
    step.arguments = {
        "patient": step.arguments["subject_id"],
        **{k: v for k, v in step.arguments.items() if k != "subject_id"},
    }
    failures = check_session(draft)
    assert [(f.gate, f.turn) for f in failures] == [("tool_contract", 0)]
    assert "patient" in failures[0].message


def test_gold_call_with_a_value_outside_the_contract(demo_cohort):
    draft = _draft("med_safety", 3)
    turn = next(t for t in draft.turns if t.task_type == "WU")
    turn.steps[0].arguments = {**turn.steps[0].arguments, "category": "drug"}  # an alias value, not the contract's
    assert _gates(draft) == {"tool_contract"}


def test_gold_result_with_warnings(demo_cohort):
    draft = _draft()
    step = draft.turns[0].steps[0]
    step.observation = {**step.observation, "warnings": ["unknown argument 'section' ignored"]}
    assert _gates(draft) == {"tool_contract"}


def test_prepare_to_answer_with_the_old_summary(demo_cohort):
    draft = _draft()
    draft.turns[1].steps[-1].arguments = {"summary": "done"}
    assert _gates(draft) == {"tool_contract"}


def test_write_check_on_a_parameter_the_contract_lacks(demo_cohort):
    draft = _draft("med_safety", 3)
    turn = next(t for t in draft.turns if t.task_type == "WU")
    check = next(r.check for r in turn.rubric if (r.check or {}).get("kind") == "write_call")
    check["params"] = {"priority": "high"}  # Flag.create has no priority any more
    failures = check_session(draft)
    assert {f.gate for f in failures} == {"tool_contract"} and "priority" in failures[0].message


def test_tier_three_without_conflict(demo_cohort):
    draft = _draft("med_safety", 3)
    for turn in draft.turns:
        turn.kind = "cr_ref_range" if turn.kind in {"cr_interaction", "cr_renal_dosing"} else turn.kind
    assert "tier" in _gates(draft)


def test_driver_rejects_after_retries_and_keeps_reasons(demo_cohort):
    def broken_patient(*, tool: str, arguments: dict) -> dict:
        return {"error": "patient unavailable"}

    # med_safety L1 arcs may not ask the patient; diagnostic_workup L1 arc 0 does (dg_patient_history).
    results = [
        generate_session(scenario=s, tier=1, seed=1, index=i, patient_answer=broken_patient, max_attempts=2)
        for s in ("diagnostic_workup", "med_safety")
        for i in range(4)
    ]
    rejected = [r for r in results if r.status == "rejected_by_gate"]
    assert rejected, "no session asked the patient"
    for r in rejected:
        assert r.attempts == 2 and r.draft is not None
        # The patient's error also leaves English in the Chinese answer; the tool result is the cause.
        assert "tool_result" in {f.gate for f in r.reasons}
        assert {f.gate for f in r.reasons} <= {"tool_result", "untranslated"}
        assert r.draft.gate_failures == r.reasons


@pytest.mark.parametrize("scenario", ["treatment_response", "discharge_planning"])
def test_passing_outcome_reports_no_reasons(demo_cohort, scenario):
    result = generate_session(scenario=scenario, tier=1, seed=4, index=2, patient_answer=record_patient)
    assert result.status == "passed" and result.reasons == [] and result.draft.gate_failures == []
