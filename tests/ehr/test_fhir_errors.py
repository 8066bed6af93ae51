"""Every kind of bad call returns {"error", "hint"} and never raises."""

import datetime as dt

import pytest

from ehr.fhir import REGISTRY, ToolContext, execute_tool

CTX = ToolContext(current_date=dt.date(2180, 7, 20))


def assert_error(out, *needles):
    assert set(out) == {"error", "hint"}, out
    assert out["error"] and out["hint"]
    for needle in needles:
        assert needle in out["error"] + " " + out["hint"], (needle, out)


def test_unknown_tool_suggests_close_names(db):
    assert_error(execute_tool(name="Observation.find", arguments={}, context=CTX), "unknown tool", "Observation.search")
    assert_error(execute_tool(name="", arguments={}, context=CTX), "unknown tool")


def test_arguments_not_json(rec):
    out = execute_tool(name="Observation.search", arguments='{"patient": 1,', context=CTX)
    assert_error(out, "not valid JSON")


@pytest.mark.parametrize("arguments", ["[1, 2]", "42", '"patient"', [1], 3])
def test_arguments_not_an_object(rec, arguments):
    assert_error(execute_tool(name="Patient.read", arguments=arguments, context=CTX), "JSON object")


def test_json_string_arguments_work(rec):
    out = execute_tool(name="Patient.read", arguments=f'{{"patient": {rec.subject_id}}}', context=CTX)
    assert out["resourceType"] == "Patient"


def test_missing_required_argument(db):
    assert_error(
        execute_tool(name="Observation.search", arguments={"code": "creatinine"}, context=CTX), "missing", "patient"
    )
    assert_error(execute_tool(name="MedicationRequest.create", arguments={"patient": 1}, context=CTX), "medication")


def test_context_supplies_the_patient(rec):
    ctx = ToolContext(current_date=CTX.current_date, subject_id=rec.subject_id)
    assert execute_tool(name="Patient.read", arguments={}, context=ctx)["id"] == str(rec.subject_id)


@pytest.mark.parametrize(
    "arguments,needle",
    [
        ({"patient": "abc"}, "must be an integer"),
        ({"patient": True}, "must be an integer"),
        ({"patient": 1.5}, "must be an integer"),
        ({"patient": 1, "code": 50912}, "must be a string"),
        ({"patient": 1, "_count": "10"}, "must be an integer"),
        ({"patient": 1, "code": "  "}, "empty"),
        ({"patient": 1, "code": None}, "null"),
    ],
)
def test_wrong_types(db, arguments, needle):
    assert_error(execute_tool(name="Observation.search", arguments=arguments, context=CTX), needle)


def test_unknown_enum_value(rec):
    out = execute_tool(
        name="Observation.search", arguments={"patient": rec.subject_id, "category": "labs"}, context=CTX
    )
    assert_error(out, "unknown value", "laboratory, vital-signs, microbiology")


@pytest.mark.parametrize("value", ["2180/07/19", "19-07-2180", "yesterday", "2180-02-30", "2180-13-01"])
def test_malformed_date(rec, value):
    out = execute_tool(
        name="Observation.search", arguments={"patient": rec.subject_id, "date_from": value}, context=CTX
    )
    assert_error(out, "date_from", "YYYY-MM-DD")


def test_datetime_is_accepted_as_its_day(rec):
    args = {
        "patient": rec.subject_id,
        "category": "laboratory",
        "code": "creatinine",
        "date_from": "2180-07-19 13:00:00",
    }
    out = execute_tool(name="Observation.search", arguments=args, context=CTX)
    assert out["total"] == 2


def test_reversed_date_window(rec):
    args = {"patient": rec.subject_id, "date_from": "2180-07-20", "date_to": "2180-07-01"}
    assert_error(execute_tool(name="Observation.search", arguments=args, context=CTX), "after date_to")


def test_count_out_of_range(rec):
    for count in (0, 100000):
        out = execute_tool(
            name="Observation.search", arguments={"patient": rec.subject_id, "_count": count}, context=CTX
        )
        assert_error(out, "out of range")


def test_unknown_argument(rec):
    out = execute_tool(name="Patient.read", arguments={"patient": rec.subject_id, "name": "x"}, context=CTX)
    assert_error(out, "does not take", "patient")


@pytest.mark.parametrize("name", [n for n, t in REGISTRY.items() if t.kind in ("ehr", "write")])
def test_unknown_patient_for_every_record_tool(db, name):
    tool = REGISTRY[name]
    arguments = {p.name: (p.example if p.example is not None else "x") for p in tool.params if p.required}
    arguments["patient"] = 123
    assert_error(execute_tool(name=name, arguments=arguments, context=CTX), "Patient 123 not found")


def test_unknown_patient_for_patient_tools(db):
    out = execute_tool(
        name="patient.get_pain_assessment", arguments={"subject_id": 123, "session_id": "s"}, context=CTX
    )
    assert_error(out, "Patient 123 not found")


@pytest.mark.parametrize(
    "name",
    [
        "Observation.search",
        "Condition.search",
        "MedicationRequest.search",
        "DocumentReference.search",
        "Encounter.search",
    ],
)
def test_unknown_or_foreign_encounter(rec, name):
    for hadm in (999, rec.future_hadm):
        out = execute_tool(name=name, arguments={"patient": rec.subject_id, "encounter": hadm}, context=CTX)
        assert_error(out, f"Encounter {hadm} not found")


def test_unknown_lab_code_suggests_labels(rec):
    args = {"patient": rec.subject_id, "category": "laboratory", "code": "creatinin"}
    out = execute_tool(name="Observation.search", arguments=args, context=CTX)
    # a typo still resolves by partial match ("creatinin" is in "Creatinine")
    assert out["resourceType"] == "Bundle" and out["total"] > 0
    args["code"] = "kreatinine"
    assert_error(
        execute_tool(name="Observation.search", arguments=args, context=CTX), "No laboratory item", "Creatinine"
    )
    args["code"] = "99999999"
    assert_error(execute_tool(name="Observation.search", arguments=args, context=CTX), "No laboratory item")


def test_internal_failure_becomes_error(rec, monkeypatch):
    from ehr.fhir import observations

    def boom(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(observations, "_search_labs", boom)
    args = {"patient": rec.subject_id, "category": "laboratory"}
    assert_error(execute_tool(name="Observation.search", arguments=args, context=CTX), "failed: RuntimeError")


def test_api_safe_name_is_accepted(rec):
    out = execute_tool(name="Patient_read", arguments={"patient": rec.subject_id}, context=CTX)
    assert out["resourceType"] == "Patient"
