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
            "indication": "AF",
            "duration_days": 30,
        },
    ),
    (
        "MedicationRequest.create",
        {"medication": "Lisinopril", "dose": "hold", "route": "PO", "frequency": "daily", "indication": "hyperkalemia"},
    ),
    ("ServiceRequest.create", {"service_type": "basic metabolic panel", "priority": "asap"}),
    (
        "Flag.create",
        {"category": "safety", "code": "bleeding risk", "detail": "Bleeding risk: warfarin with rising INR"},
    ),
]


@pytest.mark.parametrize("name,arguments", WRITE_CALLS)
def test_writes_return_simulated_resource_and_never_write(rec, name, arguments):
    before = ehr_row_counts()
    with CaptureQueriesContext(connection) as queries:
        out = execute_tool(name=name, arguments={"subject_id": rec.subject_id, **arguments}, context=ctx(rec))
    assert "warnings" not in out
    assert out["_simulated"] is True
    assert out["resourceType"] == name.split(".")[0]
    assert out["subject"] == {"reference": f"Patient/{rec.subject_id}"}
    assert out["id"].startswith("sim-")
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert writes == []
    assert ehr_row_counts() == before


ORDER = {"medication": "Apixaban", "dose": "2.5 mg", "route": "PO", "frequency": "BID"}


def test_medication_request_create_fields(rec):
    args = {"subject_id": rec.subject_id, **ORDER}
    out = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
    assert out["status"] == "active" and out["intent"] == "order"
    assert out["medicationCodeableConcept"] == {"text": "Apixaban"}
    assert out["dosageInstruction"][0]["text"] == "2.5 mg PO BID"
    assert out["dosageInstruction"][0]["doseAndRate"] == [{"doseQuantity": {"unit": "2.5 mg"}}]
    assert out["authoredOn"] == rec.current_date.isoformat() == "2180-07-21"
    assert "reasonCode" not in out and "dispenseRequest" not in out
    again = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
    assert again["id"] == out["id"]  # deterministic for replays
    full = execute_tool(
        name="MedicationRequest.create",
        arguments={**args, "indication": "atrial fibrillation", "duration_days": 30},
        context=ctx(rec),
    )
    assert full["reasonCode"] == [{"text": "atrial fibrillation"}]
    assert full["dispenseRequest"] == {"expectedSupplyDuration": {"value": 30, "unit": "days"}}
    assert full["id"] != out["id"]


def test_new_order_needs_dose_route_frequency(rec):
    for missing in ("dose", "route", "frequency"):
        args = {"subject_id": rec.subject_id, **{k: v for k, v in ORDER.items() if k != missing}}
        out = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
        assert f"missing required argument '{missing}'" in out["error"] and out["hint"]


@pytest.mark.parametrize(
    "dose,status", [("hold", "on-hold"), ("Hold", "on-hold"), ("stop", "stopped"), ("discontinue", "stopped")]
)
def test_a_dose_of_hold_or_stop_holds_or_stops_the_drug(rec, dose, status):
    args = {"subject_id": rec.subject_id, **ORDER, "medication": "Warfarin", "dose": dose}
    out = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
    assert out["status"] == status
    assert "doseAndRate" not in out["dosageInstruction"][0]


def test_order_fields_outside_the_contract_are_dropped(rec):
    # status/intent/replaces/note of our earlier MedicationRequest.create are gone from the contract
    args = {"subject_id": rec.subject_id, **ORDER}
    plain = execute_tool(name="MedicationRequest.create", arguments=args, context=ctx(rec))
    extra = {"status": "stopped", "intent": "plan", "replaces": "rx-1", "note": "x"}
    out = execute_tool(name="MedicationRequest.create", arguments={**args, **extra}, context=ctx(rec))
    warnings = out.pop("warnings")
    assert [w.split("'")[1] for w in warnings] == list(extra)
    assert out == plain and out["status"] == "active"


def test_write_encounter_defaults_to_session_admission(rec):
    out = execute_tool(
        name="Flag.create",
        arguments={"category": "clinical", "code": "fall risk", "detail": "Fell at home last week"},
        context=ctx(rec, subject_id=rec.subject_id, hadm_id=rec.current_hadm),
    )
    assert out["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}
    assert out["period"] == {"start": rec.current_date.isoformat()}
    assert out["code"] == {"text": "fall risk"} and out["note"] == [{"text": "Fell at home last week"}]
    assert out["category"][0]["coding"][0]["code"] == "clinical"
    # another patient than the session's: no admission is assumed
    other = execute_tool(
        name="Flag.create",
        arguments={"subject_id": rec.subject_id, "category": "clinical", "code": "fall risk", "detail": "x"},
        context=ctx(rec, subject_id=rec.subject_id + 1, hadm_id=rec.current_hadm),
    )
    assert "encounter" not in other


def test_service_request_fields(rec):
    args = {"subject_id": rec.subject_id, "service_type": "CBC", "priority": "urgent"}
    out = execute_tool(name="ServiceRequest.create", arguments=args, context=ctx(rec))
    assert out["code"] == {"text": "CBC"} and out["priority"] == "urgent"
    assert "occurrenceDateTime" not in out and "note" not in out
    dated = execute_tool(
        name="ServiceRequest.create",
        arguments={**args, "target_date": rec.current_date.isoformat(), "note": "rising creatinine"},
        context=ctx(rec),
    )
    assert dated["occurrenceDateTime"] == "2180-07-21"  # today is allowed
    assert dated["note"] == [{"text": "rising creatinine"}]


@pytest.mark.parametrize(
    "name,arguments,needle",
    [
        ("ServiceRequest.create", {}, "missing required argument 'service_type'"),
        ("ServiceRequest.create", {"service_type": "CBC"}, "missing required argument 'priority'"),
        ("ServiceRequest.create", {"service_type": "CBC", "priority": "whenever"}, "unknown value"),
        (
            "ServiceRequest.create",
            {"service_type": "CBC", "priority": "routine", "target_date": "2180-07-20"},
            "before the current date",
        ),
        (
            "ServiceRequest.create",
            {"service_type": "CBC", "priority": "routine", "target_date": "next week"},
            "not a date",
        ),
        ("Flag.create", {}, "missing required argument 'category'"),
        ("Flag.create", {"category": "safety", "code": "x"}, "missing required argument 'detail'"),
        ("Flag.create", {"code": "x", "category": "urgent", "detail": "x"}, "unknown value"),
        ("MedicationRequest.create", {"medication": "x"}, "missing required argument 'dose'"),
        (
            "MedicationRequest.create",
            {"medication": "x", "dose": "1 mg", "route": "PO", "frequency": "daily", "duration_days": 5000},
            "out of range",
        ),
        (
            "MedicationRequest.create",
            {"medication": "x", "dose": "1 mg", "route": "PO", "frequency": "daily", "duration_days": "30"},
            "must be an integer",
        ),
    ],
)
def test_write_validation(rec, name, arguments, needle):
    out = execute_tool(name=name, arguments={"subject_id": rec.subject_id, **arguments}, context=ctx(rec))
    assert needle in out["error"], out
    assert out["hint"]


def test_prepare_to_answer(db):
    ctx = ToolContext(current_date=dt.date(2180, 7, 21))
    ready = execute_tool(name="prepare_to_answer", arguments={}, context=ctx)
    assert ready == {"status": "ready", "message": ready["message"]} and ready["message"]
    for answer_type in ("tool", "chat"):
        assert execute_tool(name="prepare_to_answer", arguments={"answer_type": answer_type}, context=ctx) == ready
    # our earlier `summary` argument is gone: dropped, and named
    out = execute_tool(name="prepare_to_answer", arguments={"summary": "Cr rising"}, context=ctx)
    assert out.pop("warnings") == ["unknown argument 'summary' ignored; prepare_to_answer takes: answer_type"]
    assert out == ready
    assert (
        "unknown value" in execute_tool(name="prepare_to_answer", arguments={"answer_type": "x"}, context=ctx)["error"]
    )


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
    out = execute_tool(name="patient.get_social_history", arguments={"session_id": "s"}, context=ctx(rec))
    assert "missing required argument 'subject_id'" in out["error"]


# What each patient tool takes besides subject_id and session_id (the released contract).
PATIENT_TOOL_ARGUMENTS = {
    "patient.get_symptom_history": {"query": "chest pain"},
    "patient.get_medication_adherence": {"drug": "warfarin"},
    "patient.get_social_history": {},
    "patient.get_functional_status": {},
    "patient.get_pain_assessment": {},
}


@pytest.fixture
def responder_calls():
    calls = []

    def responder(*, tool, arguments, context):
        calls.append((tool, arguments, context))
        return {"patient_response": "I take it every morning."}

    register_patient_responder(responder)
    yield calls
    register_patient_responder(None)


@pytest.mark.parametrize("api_name", [False, True])
@pytest.mark.parametrize("name", PATIENT_TOOLS)
def test_patient_tools_call_the_registered_responder_with_session_values(rec, responder_calls, name, api_name):
    extra = PATIENT_TOOL_ARGUMENTS[name]
    out = execute_tool(
        name=name.replace(".", "__") if api_name else name,
        arguments={"subject_id": 1, "session_id": "wrong", **extra},
        context=ctx(rec, subject_id=rec.subject_id, session_id="physassistbench_med_safety_0"),
    )
    assert out == {"patient_response": "I take it every morning."}
    tool, arguments, context = responder_calls[0]
    assert tool == name
    # the harness's session values win over what the model passed
    assert arguments == {"subject_id": rec.subject_id, "session_id": "physassistbench_med_safety_0", **extra}
    assert context.current_date == rec.current_date


def test_patient_tools_without_harness_values_take_the_models(rec, responder_calls):
    # e.g. manage.py ehr_tool without --subject-id / --session-id
    for arguments in (
        {"subject_id": rec.subject_id, "session_id": "s9"},
        {"patient": rec.subject_id, "session_id": "s9"},
    ):
        out = execute_tool(name="patient.get_pain_assessment", arguments=arguments, context=ctx(rec))
        assert out == {"patient_response": "I take it every morning."}
        assert responder_calls[-1][1] == {"subject_id": rec.subject_id, "session_id": "s9"}


def test_patient_tool_arguments_outside_the_contract_are_dropped(rec, responder_calls):
    # our earlier topic/domain/location/question are gone: dropped, named, and not passed on
    context = ctx(rec, subject_id=rec.subject_id, session_id="s")
    for name, old in [
        ("patient.get_social_history", "topic"),
        ("patient.get_functional_status", "domain"),
        ("patient.get_pain_assessment", "location"),
        ("patient.get_medication_adherence", "question"),
    ]:
        out = execute_tool(name=name, arguments={old: "hobbies"}, context=context)
        assert out.pop("warnings") == [
            f"unknown argument '{old}' ignored; {name} takes: subject_id, session_id"
            + {"patient.get_medication_adherence": ", drug"}.get(name, "")
        ]
        assert out == {"patient_response": "I take it every morning."}
        assert responder_calls[-1][1] == {"subject_id": rec.subject_id, "session_id": "s"}
