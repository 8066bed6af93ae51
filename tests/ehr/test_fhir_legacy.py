"""Stored calls of earlier versions are rewritten into the released contract, losing nothing."""

from __future__ import annotations

import pytest

from ehr.fhir.legacy import upgrade_arguments
from ehr.fhir.registry import REGISTRY

OLD_CALLS = [
    (
        "Observation.search",
        {"patient": 1, "encounter": 2, "code": "creatinine", "_count": 5},
        {"subject_id": 1, "hadm_id": 2, "code": "creatinine", "_count": 5},
        {},
    ),
    (
        "MedicationRequest.search",
        {"patient": 1, "code": "warfarin", "date_from": "2180-01-01"},
        {"subject_id": 1, "medication": "warfarin"},
        {"date_from": "2180-01-01"},
    ),
    (
        "DocumentReference.search",
        {"patient": 1, "type": "discharge", "section": "Social History"},
        {"subject_id": 1, "type_code": "discharge-summary", "keyword": "Social History"},
        {},
    ),
    (
        "MedicationRequest.create",
        {"patient": 1, "medication": "warfarin", "status": "on-hold", "intent": "order", "reason": "INR 4.2"},
        {"subject_id": 1, "medication": "warfarin", "dose": "hold", "indication": "INR 4.2"},
        {"intent": "order"},
    ),
    (
        "ServiceRequest.create",
        {"patient": 1, "code": "BMP", "category": "laboratory", "priority": "stat", "occurrence_date": "2180-07-24"},
        {"subject_id": 1, "service_type": "BMP", "priority": "asap", "target_date": "2180-07-24"},
        {"category": "laboratory"},
    ),
    (
        "Flag.create",
        {"patient": 1, "code": "Bleeding risk: INR 4.2", "category": "drug", "priority": "high"},
        {"subject_id": 1, "category": "safety", "code": "Bleeding risk: INR 4.2", "detail": "Bleeding risk: INR 4.2"},
        {"priority": "high"},
    ),
    (
        "patient.get_symptom_history",
        {"session_id": "s", "subject_id": 1, "symptom": "chest pain"},
        {"subject_id": 1, "session_id": "s", "query": "chest pain"},
        {},
    ),
    ("prepare_to_answer", {"summary": "done"}, {"answer_type": "tool"}, {"summary": "done"}),
]


@pytest.mark.parametrize(("tool", "old", "new", "left"), OLD_CALLS, ids=[c[0] for c in OLD_CALLS])
def test_old_calls_map_to_the_contract_and_keep_leftovers(tool, old, new, left):
    args, leftovers = upgrade_arguments(tool=tool, arguments=old)
    assert args == new
    assert leftovers == left
    assert set(args) <= {p.name for p in REGISTRY[tool].params}
    # idempotent: a contract call comes back unchanged, with nothing left over
    assert upgrade_arguments(tool=tool, arguments=args) == (args, {})


def test_unknown_tool_is_left_alone():
    assert upgrade_arguments(tool="No.such", arguments={"x": 1}) == ({"x": 1}, {})
