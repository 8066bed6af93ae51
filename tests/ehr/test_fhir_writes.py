"""Simulated writes, prepare_to_answer and the patient-tool hook."""

import datetime as dt

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ehr.fhir import ToolContext, execute_tool, register_patient_responder


def ctx(rec, **kw):
    return ToolContext(current_date=rec.current_date, **kw)


def ehr_row_counts():
    return {model.__name__: model.objects.count() for model in apps.get_app_config("ehr").get_models()}


WRITE_CALLS = [
    (
        "MedicationRequest.create",
        {
            "medication": "Apixaban",
            "dose": "2.5 mg",
            "route": "PO",
            "frequency": "BID",
            "reason": "AF",
            "duration_days": 30,
        },
    ),
    ("MedicationRequest.create", {"medication": "Lisinopril", "status": "stopped", "reason": "hyperkalemia"}),
    ("ServiceRequest.create", {"code": "basic metabolic panel", "category": "laboratory", "priority": "stat"}),
    ("Flag.create", {"code": "Bleeding risk: warfarin with rising INR", "category": "drug", "priority": "high"}),
]


@pytest.mark.parametrize("name,arguments", WRITE_CALLS)
def test_writes_return_simulated_resource_and_never_write(rec, name, arguments):
    before = ehr_row_counts()
    with CaptureQueriesContext(connection) as queries:
        out = execute_tool(name=name, arguments={"patient": rec.subject_id, **arguments}, context=ctx(rec))
    assert out["_simulated"] is True
    assert out["resourceType"] == name.split(".")[0]
    assert out["subject"] == {"reference": f"Patient/{rec.subject_id}"}
    assert out["id"].startswith("sim-")
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert writes == []
    assert ehr_row_counts() == before


def test_medication_request_create_fields(rec):
    args = {"patient": rec.subject_id, "medication": "Apixaban", "dose": "2.5 mg", "route": "PO", "frequency": "BID"}
    out = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
    assert out["status"] == "active" and out["intent"] == "order"
    assert out["medicationCodeableConcept"] == {"text": "Apixaban"}
    assert out["dosageInstruction"][0]["text"] == "2.5 mg PO BID"
    assert out["authoredOn"] == "2180-07-20"
    again = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
    assert again["id"] == out["id"]  # deterministic for replays


def test_new_order_needs_dose_route_frequency(rec):
    out = execute_tool(
        name="MedicationRequest.create",
        arguments={"patient": rec.subject_id, "medication": "Apixaban"},
        context=ctx(rec),
    )
    assert "dose, route, frequency" in out["error"] and "stopped" in out["hint"]


def test_replaces_must_be_a_visible_order(rec):
    found = execute_tool(
        name="MedicationRequest.search", arguments={"patient": rec.subject_id, "code": "warfarin"}, context=ctx(rec)
    )
    rx_id = found["entry"][0]["resource"]["id"]
    args = {"patient": rec.subject_id, "medication": "Warfarin", "dose": "2.5 mg", "route": "PO", "frequency": "daily"}
    out = execute_tool(name="MedicationRequest.create", arguments={**args, "replaces": rx_id}, context=ctx(rec))
    assert out["replaces"] == [{"reference": f"MedicationRequest/{rx_id}"}]
    bad = execute_tool(name="MedicationRequest.create", arguments={**args, "replaces": "rx-1"}, context=ctx(rec))
    assert "not one of this patient's" in bad["error"]


def test_write_encounter_defaults_to_session_admission(rec):
    out = execute_tool(
        name="Flag.create",
        arguments={"code": "Fall risk"},
        context=ctx(rec, subject_id=rec.subject_id, hadm_id=rec.current_hadm),
    )
    assert out["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}
    assert out["period"] == {"start": "2180-07-20"}


@pytest.mark.parametrize(
    "name,arguments,needle",
    [
        ("ServiceRequest.create", {}, "missing required argument 'code'"),
        ("ServiceRequest.create", {"code": "CBC", "priority": "whenever"}, "unknown value"),
        ("ServiceRequest.create", {"code": "CBC", "occurrence_date": "2180-07-01"}, "before the current date"),
        ("ServiceRequest.create", {"code": "CBC", "occurrence_date": "next week"}, "not a date"),
        ("Flag.create", {}, "missing required argument 'code'"),
        ("Flag.create", {"code": "x", "category": "urgent"}, "unknown value"),
        ("Flag.create", {"code": "x", "period_end": "2180-01-01"}, "before the current date"),
        ("MedicationRequest.create", {"medication": "x", "status": "paused"}, "unknown value"),
        ("MedicationRequest.create", {"medication": "x", "status": "stopped", "encounter": 1}, "Encounter 1 not found"),
    ],
)
def test_write_validation(rec, name, arguments, needle):
    out = execute_tool(name=name, arguments={"patient": rec.subject_id, **arguments}, context=ctx(rec))
    assert needle in out["error"], out
    assert out["hint"]


def test_prepare_to_answer(db):
    ctx = ToolContext(current_date=dt.date(2180, 7, 20))
    assert execute_tool(name="prepare_to_answer", arguments={}, context=ctx)["status"] == "ready"
    assert execute_tool(name="prepare_to_answer", arguments={"summary": "Cr rising"}, context=ctx)["status"] == "ready"


# --- patient tools ---------------------------------------------------------------------------


PATIENT_TOOLS = [
    "patient.get_symptom_history",
    "patient.get_medication_adherence",
    "patient.get_social_history",
    "patient.get_functional_status",
    "patient.get_pain_assessment",
]


@pytest.mark.parametrize("name", PATIENT_TOOLS)
def test_patient_tools_without_responder_are_a_readable_error(rec, name):
    register_patient_responder(None)
    out = execute_tool(name=name, arguments={}, context=ctx(rec, subject_id=rec.subject_id, session_id="s1"))
    assert set(out) == {"error", "hint"} and "no patient" in out["error"]


def test_patient_tools_missing_session_without_harness(rec):
    out = execute_tool(name="patient.get_social_history", arguments={"subject_id": rec.subject_id}, context=ctx(rec))
    assert "missing required argument 'session_id'" in out["error"]


@pytest.mark.parametrize("name", PATIENT_TOOLS)
def test_patient_tools_call_the_registered_responder_with_session_values(rec, name):
    calls = []

    def responder(*, tool, arguments, context):
        calls.append((tool, arguments, context))
        return {"answer": "I take it every morning."}

    register_patient_responder(responder)
    try:
        out = execute_tool(
            name=name.replace(".", "_"),
            arguments={"subject_id": 1, "session_id": "wrong", "question": "How do you take it?"},
            context=ctx(rec, subject_id=rec.subject_id, session_id="physassistbench_med_safety_0"),
        )
    finally:
        register_patient_responder(None)
    assert out == {"answer": "I take it every morning."}
    tool, arguments, context = calls[0]
    assert tool == name
    # the harness's session values win over what the model passed
    assert arguments == {
        "subject_id": rec.subject_id,
        "session_id": "physassistbench_med_safety_0",
        "question": "How do you take it?",
    }
    assert context.current_date == rec.current_date


def test_patient_tool_enum_is_checked(rec):
    out = execute_tool(
        name="patient.get_social_history",
        arguments={"topic": "hobbies"},
        context=ctx(rec, subject_id=rec.subject_id, session_id="s"),
    )
    assert "unknown value" in out["error"]
