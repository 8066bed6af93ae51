"""The release's compact text observations (pab-protocol.md, "The released runner's conditions")."""

from __future__ import annotations

import json

from evaluation.protocols.compact import compact_observation


def _bundle(*resources, total=None):
    return {
        "resourceType": "Bundle",
        "type": "searchset",
        "total": len(resources) if total is None else total,
        "entry": [{"resource": r} for r in resources],
    }


def _lab(value, day, *, code="Creatinine", unit="mg/dL", flag=None):
    out = {
        "resourceType": "Observation",
        "code": {"text": code},
        "valueQuantity": {"value": value, "unit": unit},
        "effectiveDateTime": f"{day} 06:00:00",
    }
    if flag:
        out["interpretation"] = [{"coding": [{"code": flag[0], "display": flag}]}]
    return out


def test_a_bundle_is_a_count_and_one_line_per_resource():
    text = compact_observation(
        tool="Observation.search",
        observation=_bundle(_lab(0.9, "2209-05-24"), _lab(1.4, "2209-05-23", flag="High")),
    )
    assert text == "(2 results)\n  - Creatinine: 0.9 mg/dL @ 2209-05-24\n  - Creatinine: 1.4 mg/dL (High) @ 2209-05-23"


def test_at_most_fifteen_lines_then_the_rest_counted_from_the_total():
    labs = [_lab(i, "2209-05-01") for i in range(20)]
    lines = compact_observation(tool="Observation.search", observation=_bundle(*labs, total=42)).split("\n")
    assert lines[0] == "(42 results)" and len(lines) == 1 + 15 + 1
    assert lines[-1] == "  ... (27 more)"
    assert compact_observation(tool="Observation.search", observation=_bundle()) == "(0 results)"


def test_one_line_per_resource_type():
    resources = [
        {
            "resourceType": "MedicationRequest",
            "status": "completed",
            "medicationCodeableConcept": {"text": "Apixaban"},
            "dosageInstruction": [
                {
                    "text": "5 mg PO/NG",
                    "route": {"text": "PO/NG"},
                    "doseAndRate": [{"doseQuantity": {"value": 5.0, "unit": "mg"}}],
                }
            ],
            "authoredOn": "2209-05-21 08:00:00",
        },
        {
            "resourceType": "Condition",
            "code": {"text": "Acute kidney failure"},
            "clinicalStatus": {"coding": [{"code": "active"}]},
            "recordedDate": "2209-05-20 10:00:00",
        },
        {
            "resourceType": "MedicationAdministration",
            "medicationCodeableConcept": {"text": "Heparin"},
            "dosage": {"dose": {"value": 5000, "unit": "units"}},
            "effectiveDateTime": "2209-05-22 21:15:00",
        },
        {
            "resourceType": "AllergyIntolerance",
            "code": {"text": "Penicillins"},
            "criticality": "low",
            "reaction": [{"manifestation": [{"text": "rash"}, {"text": "itch"}]}],
        },
        {
            "resourceType": "Procedure",
            "code": {"text": "Dialysis"},
            "status": "completed",
            "performedDateTime": "2209-05-20",
        },
        {"resourceType": "CarePlan", "title": "Discharge plan", "status": "active"},
        {
            "resourceType": "Encounter",
            "class": {"code": "IMP"},
            "type": [{"text": "EW EMER."}],
            "period": {"start": "2209-05-19 10:00:00", "end": "2209-05-26 12:00:00"},
            "hospitalization": {"dischargeDisposition": {"text": "HOME"}},
        },
        {"resourceType": "Specimen", "id": "x"},
    ]
    lines = compact_observation(tool="any", observation=_bundle(*resources)).split("\n")
    assert lines[1:] == [
        # issue 33, the semantics file's corrections: the release's own resources give no date and a compact dose
        "  - Apixaban [completed]: 5mg PO/NG @ ",
        "  - Acute kidney failure [active] @ ",
        "  - Heparin: 5000 units @ 2209-05-22 21:15",
        "  - Penicillins [low]: rash, itch",
        "  - Dialysis [completed] @ 2209-05-20",
        "  - Discharge plan [completed]",
        "  - IMP EW EMER. 2209-05-19–2209-05-26 HOME",
        '  - Specimen: {"resourceType": "Specimen", "id": "x"}',
    ]


def test_report_and_note_text_are_cut_to_600_and_800_characters():
    report = {
        "resourceType": "DiagnosticReport",
        "code": {"text": "CHEST (PA AND LAT)"},
        "effectiveDateTime": "2209-05-20 11:00:00",
        "conclusion": "r" * 700,
    }
    note = {
        "resourceType": "DocumentReference",
        "type": {"text": "Discharge summary"},
        "date": "2209-05-26 00:00:00",
        "content": [{"attachment": {"data": "n" * 900}}],
    }
    # PhysReview's notes keep their text in sections: the same line, from the sections.
    sectioned = {
        **note,
        "content": [{"attachment": {"title": "Discharge summary"}}],
        "section": [{"title": "Allergies", "text": "Codeine"}],
    }
    lines = compact_observation(tool="any", observation=_bundle(report, note, sectioned)).split("\n")
    assert lines[1] == f"  - CHEST (PA AND LAT) @ 2209-05-20: {'r' * 600}"
    assert lines[2] == f"  - Discharge summary @ 2209-05-26: {'n' * 800}"
    assert lines[3] == "  - Discharge summary @ 2209-05-26: Allergies: Codeine"


def test_patient_answers_created_resources_and_the_rest():
    said = {"patient_response": "x" * 2000, "patient_responses_all_literacy": {"low": "y"}}
    assert compact_observation(tool="patient.get_pain_assessment", observation=said) == "x" * 1500
    created = {"resourceType": "Flag", "id": "sim-flag-1", "status": "active", "_simulated": True}
    assert compact_observation(tool="Flag.create", observation=created) == "Flag created: id=sim-flag-1 status=active"
    error = {"error": "unknown tool 'Lab.lookup'", "hint": "Call one of the tools."}
    assert compact_observation(tool="Lab.lookup", observation=error) == json.dumps(error)
    patient = {"resourceType": "Patient", "gender": "female", "name": "患者"}
    assert compact_observation(tool="Patient.read", observation=patient) == json.dumps(patient, ensure_ascii=False)


def test_the_whole_text_is_capped_at_4000_characters():
    text = compact_observation(tool="Patient.read", observation={"resourceType": "Patient", "note": "z" * 5000})
    head, tail = text.split("\n... [truncated: ")
    assert len(head) == 4000 and tail.endswith(" chars total]")
