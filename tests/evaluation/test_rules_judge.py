"""The rules judge on each machine-checkable form, and unscored items."""

from evaluation.dataset import EvalRubric
from evaluation.judges.rules import (
    check_must_not_recommend,
    check_term,
    check_value_unit,
    check_write_call,
    judge_item,
)


def test_value_unit_tolerance_unit_and_sentence_unit():
    assert check_value_unit(answer="Creatinine 1.42 mg/dL today", value=1.4, unit="mg/dL", tolerance=0.05)[0]
    assert not check_value_unit(answer="Creatinine 1.5 mg/dL", value=1.4, unit="mg/dL", tolerance=0.05)[0]
    assert not check_value_unit(answer="Creatinine 1.4 mmol/L", value=1.4, unit="mg/dL")[0]
    assert check_value_unit(answer="Potassium (mEq/L): 5.4, 5.3.", value=5.3, unit="mEq/L")[0]
    assert check_value_unit(answer="went from 6.4 to 5 mEq/L (-1.4 mEq/L)", value=1.4, unit="meq/l")[0]
    # exact match when the tolerance is 0: 20 is not 2
    assert not check_value_unit(answer="dose 2 mg", value=20, unit="mg")[0]
    assert check_value_unit(answer="肌酐 1.4 mg/dL。", value=1.4, unit="mg/dL")[0]


def test_term_either_language():
    assert check_term(answer="Risk of 高钾血症", phrases=["hyperkalemia", "高钾血症"])[0]
    assert check_term(answer="HYPERKALEMIA noted", phrases=["hyperkalemia"])[0]
    assert not check_term(answer="normal potassium", phrases=["hyperkalemia", "高钾血症"])[0]


def test_must_not_recommend_with_negation():
    assert check_must_not_recommend(answer="Adjust the regimen; do not stop insulin.", phrases=["stop insulin"])[0]
    assert check_must_not_recommend(answer="建议：避免补钾制剂。", phrases=["补钾制剂"])[0]
    assert not check_must_not_recommend(answer="Give potassium supplements now.", phrases=["potassium supplements"])[0]
    # a negation in an earlier clause does not cover a later recommendation
    assert not check_must_not_recommend(answer="Do not wait. Start ibuprofen.", phrases=["ibuprofen"])[0]


def test_write_call_parameters():
    writes = [{"tool": "ServiceRequest.create", "arguments": {"service_type": "Potassium Level", "priority": "urgent"}}]
    assert check_write_call(writes=writes, tool="ServiceRequest.create", params={"service_type": "potassium level"})[0]
    assert check_write_call(writes=writes, tool="ServiceRequest.create", params={})[0]
    assert not check_write_call(writes=writes, tool="ServiceRequest.create", params={"priority": "routine"})[0]
    assert not check_write_call(writes=writes, tool="Flag.create", params={})[0]


def test_write_call_compares_in_the_contracts_terms():
    """The call as the tool ran it (aliases, value aliases) against the check, old checks upgraded."""
    aliased = [{"tool": "ServiceRequest.create", "arguments": {"code": "Potassium Level", "priority": "stat"}}]
    assert check_write_call(writes=aliased, tool="ServiceRequest.create", params={"priority": "asap"})[0]
    # A check stored by an earlier version: its FHIR-style names are upgraded.
    assert check_write_call(writes=aliased, tool="ServiceRequest.create", params={"code": "potassium level"})[0]
    hold = [
        {
            "tool": "MedicationRequest.create",
            "arguments": {"subject_id": 1, "medication": "Apixaban", "dose": "hold", "route": "PO", "frequency": "BID"},
        }
    ]
    assert check_write_call(writes=hold, tool="MedicationRequest.create", params={"dose": "hold"})[0]
    old = {"medication": "apixaban", "status": "on-hold"}  # the old way to hold a drug
    assert check_write_call(writes=hold, tool="MedicationRequest.create", params=old)[0]
    given = [{**hold[0], "arguments": {**hold[0]["arguments"], "dose": "2.5 mg"}}]
    assert not check_write_call(writes=given, tool="MedicationRequest.create", params=old)[0]
    # Old parameters with no place in the contract (the migration's legacy_params) are not checked.
    assert check_write_call(writes=hold, tool="MedicationRequest.create", params={"intent": "order"})[0]
    flag = [{"tool": "Flag.create", "arguments": {"category": "drug", "code": "bleeding", "note": "INR 4.2"}}]
    assert check_write_call(writes=flag, tool="Flag.create", params={"category": "safety", "detail": "inr 4.2"})[0]


def test_item_without_form_is_unscored():
    item = EvalRubric(idx=3, text_en="Explains", text_zh="解释", is_safety=True, machine_check=None)
    verdict = judge_item(item=item, answer="anything", writes=[])
    assert verdict.scored is False and verdict.passed is None and verdict.is_safety
