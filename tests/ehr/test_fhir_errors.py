"""Every kind of bad call returns {"error", "hint"} and never raises."""

import datetime as dt

import pytest

from ehr.fhir import REGISTRY, ToolContext, execute_tool

CTX = ToolContext(current_date=dt.date(2180, 7, 21))  # the session date of tests.ehr.factories.Record


def assert_error(out, *needles):
    assert set(out) == {"error", "hint"}, out
    assert out["error"] and out["hint"]
    for needle in needles:
        assert needle in out["error"] + " " + out["hint"], (needle, out)


def test_unknown_tool_suggests_close_names(db):
    assert_error(execute_tool(name="Observation.find", arguments={}, context=CTX), "unknown tool", "Observation.search")
    assert_error(execute_tool(name="", arguments={}, context=CTX), "unknown tool")


def test_arguments_not_json(rec):
    out = execute_tool(name="Observation.search", arguments='{"subject_id": 1,', context=CTX)
    assert_error(out, "not valid JSON")


@pytest.mark.parametrize("arguments", ["[1, 2]", "42", '"subject_id"', [1], 3])
def test_arguments_not_an_object(rec, arguments):
    assert_error(execute_tool(name="Patient.read", arguments=arguments, context=CTX), "JSON object")


def test_json_string_arguments_work(rec):
    out = execute_tool(name="Patient.read", arguments=f'{{"subject_id": {rec.subject_id}}}', context=CTX)
    assert out["resourceType"] == "Patient"


def test_missing_required_argument(db):
    assert_error(
        execute_tool(name="Observation.search", arguments={"code": "creatinine"}, context=CTX), "missing", "subject_id"
    )
    assert_error(execute_tool(name="MedicationRequest.create", arguments={"subject_id": 1}, context=CTX), "medication")
    # a placeholder is "not given" only for an optional parameter: a required one stays missing
    for placeholder in (None, "", "  "):
        out = execute_tool(
            name="MedicationRequest.create",
            arguments={"subject_id": 1, "medication": placeholder, "dose": "5 mg", "route": "PO", "frequency": "BID"},
            context=CTX,
        )
        assert_error(out, "medication")


def test_context_supplies_the_patient(rec):
    ctx = ToolContext(current_date=CTX.current_date, subject_id=rec.subject_id)
    assert execute_tool(name="Patient.read", arguments={}, context=ctx)["id"] == str(rec.subject_id)


@pytest.mark.parametrize(
    "arguments,needle",
    [
        ({"subject_id": "abc"}, "must be an integer"),
        ({"subject_id": True}, "must be an integer"),
        ({"subject_id": 1.5}, "must be an integer"),
        ({"subject_id": None}, "null"),
        ({"subject_id": 1, "code": 50912}, "must be a string"),
        ({"subject_id": 1, "_count": "10"}, "must be an integer"),
        ({"subject_id": 1, "hadm_id": "20001234"}, "must be an integer"),
        ({"subject_id": 1, "category": True}, "must be a string"),
    ],
)
def test_wrong_types(db, arguments, needle):
    assert_error(execute_tool(name="Observation.search", arguments=arguments, context=CTX), needle)


def test_empty_required_string(rec):
    args = {"subject_id": rec.subject_id, "category": "safety", "code": "  ", "detail": "x"}
    assert_error(execute_tool(name="Flag.create", arguments=args, context=CTX), "argument 'code'", "empty")


def test_unknown_enum_value(rec):
    out = execute_tool(
        name="Observation.search", arguments={"subject_id": rec.subject_id, "category": "chemistry"}, context=CTX
    )
    assert_error(out, "unknown value", "laboratory, vital-signs, microbiology")


@pytest.mark.parametrize("value", ["2180/07/19", "19-07-2180", "yesterday", "2180-02-30", "2180-13-01"])
def test_malformed_date(rec, value):
    out = execute_tool(
        name="Observation.search", arguments={"subject_id": rec.subject_id, "date_from": value}, context=CTX
    )
    assert_error(out, "date_from", "YYYY-MM-DD")


def test_datetime_is_accepted_as_its_day(rec):
    args = {
        "subject_id": rec.subject_id,
        "category": "laboratory",
        "code": "creatinine",
        "date_from": "2180-07-19 13:00:00",
    }
    out = execute_tool(name="Observation.search", arguments=args, context=CTX)
    assert out["total"] == 2


def test_reversed_date_window(rec):
    args = {"subject_id": rec.subject_id, "date_from": "2180-07-20", "date_to": "2180-07-01"}
    assert_error(execute_tool(name="Observation.search", arguments=args, context=CTX), "after date_to")


def test_count_out_of_range(rec):
    # (0 is a placeholder: "not given", the default count; see test_fhir_contract.py)
    for count in (-1, 100000):
        out = execute_tool(
            name="Observation.search", arguments={"subject_id": rec.subject_id, "_count": count}, context=CTX
        )
        assert_error(out, "out of range")


def test_unknown_argument_is_dropped_and_named(rec):
    plain = execute_tool(name="Patient.read", arguments={"subject_id": rec.subject_id}, context=CTX)
    out = execute_tool(name="Patient.read", arguments={"subject_id": rec.subject_id, "name": "x"}, context=CTX)
    assert out.pop("warnings") == ["unknown argument 'name' ignored; Patient.read takes: subject_id"]
    assert out == plain and "warnings" not in plain


def test_dropped_arguments_are_named_on_an_error_too(db):
    out = execute_tool(name="Patient.read", arguments={"subject_id": 123, "name": "x"}, context=CTX)
    assert "Patient 123 not found" in out["error"] and out["hint"]
    assert out["warnings"] == ["unknown argument 'name' ignored; Patient.read takes: subject_id"]


def test_alias_and_contract_name_together_keep_the_contract_name(rec):
    out = execute_tool(
        name="Observation.search",
        arguments={"subject_id": rec.subject_id, "category": "laboratory", "code": "potassium", "test_name": "cr"},
        context=CTX,
    )
    assert out.pop("warnings") == ["argument 'test_name' ignored: 'code' is already given"]
    assert {e["resource"]["code"]["text"] for e in out["entry"]} == {"Potassium"}


@pytest.mark.parametrize("name", [n for n, t in REGISTRY.items() if t.kind in ("ehr", "write")])
def test_unknown_patient_for_every_record_tool(db, name):
    tool = REGISTRY[name]
    arguments = {p.name: (p.example if p.example is not None else "x") for p in tool.params if p.required}
    arguments["subject_id"] = 123
    assert_error(execute_tool(name=name, arguments=arguments, context=CTX), "Patient 123 not found")
    # the same under the FHIR-style name
    arguments["patient"] = arguments.pop("subject_id")
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
        out = execute_tool(name=name, arguments={"subject_id": rec.subject_id, "hadm_id": hadm}, context=CTX)
        assert_error(out, f"Encounter {hadm} not found")


def test_unknown_lab_code_suggests_labels(rec):
    args = {"subject_id": rec.subject_id, "category": "laboratory", "code": "creatinin"}
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

    monkeypatch.setattr(observations, "search_labs", boom)  # where the tool looks it up
    args = {"subject_id": rec.subject_id, "category": "laboratory"}
    assert_error(execute_tool(name="Observation.search", arguments=args, context=CTX), "failed: RuntimeError")


@pytest.mark.parametrize("name", ["Patient__read", "Patient_read"])  # the release's API-safe name, and our older one
def test_api_safe_name_is_accepted(rec, name):
    out = execute_tool(name=name, arguments={"subject_id": rec.subject_id}, context=CTX)
    assert out["resourceType"] == "Patient"
