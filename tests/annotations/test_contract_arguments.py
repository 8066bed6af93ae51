"""Gold tool-call arguments in the released contract's terms: stored on edit, shown on the review screen."""

import pytest

from annotations.steps import ArgumentsOutsideContract, contract_arguments, contract_view
from annotations.templatetags.review_extras import argument_text
from annotations.templatetags.review_extras import contract_arguments as contract_filter


def test_edited_arguments_are_stored_under_the_contracts_names():
    assert contract_arguments(
        tool="Observation.search",
        arguments={"patient": 1, "encounter": 2, "test_name": "INR", "type": "labs", "date_from": "", "_count": 0},
    ) == {"subject_id": 1, "hadm_id": 2, "category": "laboratory", "code": "INR"}
    # An old way of holding a drug becomes the contract's dose 'hold'.
    assert contract_arguments(
        tool="MedicationRequest.create",
        arguments={"medication": "apixaban", "status": "on-hold", "route": "PO", "frequency": "BID"},
    ) == {"medication": "apixaban", "dose": "hold", "route": "PO", "frequency": "BID"}
    # Required parameters are never placeholders: a reviewer's empty dose stays for the re-run to flag.
    assert contract_arguments(tool="MedicationRequest.create", arguments={"dose": ""}) == {"dose": ""}
    assert contract_arguments(tool="Made.up", arguments={"x": 1}) == {"x": 1}


def test_names_the_contract_lacks_are_refused_not_dropped():
    with pytest.raises(ArgumentsOutsideContract, match=r"takes no argument topic; it takes: subject_id, session_id"):
        contract_arguments(tool="patient.get_social_history", arguments={"topic": "smoking"})
    # An alias next to its own contract name is one argument too many.
    with pytest.raises(ArgumentsOutsideContract, match="code"):
        contract_arguments(tool="MedicationRequest.search", arguments={"medication": "warfarin", "code": "x"})


def test_the_review_screen_shows_contract_names():
    old = {"patient": 1, "symptom": "chest pain", "session_id": "s"}
    assert contract_view(tool="patient.get_symptom_history", arguments=old) == {
        "subject_id": 1,
        "session_id": "s",
        "query": "chest pain",
    }
    assert contract_filter(old, "patient.get_symptom_history") == contract_view(
        tool="patient.get_symptom_history", arguments=old
    )
    # What the contract has no place for is not shown; other values pass through.
    assert contract_filter({"question": "Do you smoke?"}, "patient.get_social_history") == {}
    assert contract_filter("not a dict", "Observation.search") == "not a dict"
    assert argument_text(old, "patient.get_symptom_history") == "query: chest pain"
    assert argument_text({"medication": "Warfarin"}, "patient.get_medication_adherence") == "drug: Warfarin"
    assert argument_text(None, "patient.get_pain_assessment") == ""
