"""ehr_tools_schema and ehr_tool management commands."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ehr.fhir import TOOL_NAMES
from tests.ehr.factories import build_record


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_schema_command(lang):
    text = run("ehr_tools_schema", "--lang", lang)
    schemas = json.loads(text)
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    if lang == "zh":
        assert "检索" in text  # written as UTF-8, not \u escapes


def test_schema_command_api_names_and_hash():
    names = [s["function"]["name"] for s in json.loads(run("ehr_tools_schema", "--api-names"))]
    assert "Observation_search" in names and "patient_get_pain_assessment" in names
    assert len(run("ehr_tools_schema", "--hash").strip()) == 64


def test_tool_command_runs_a_tool(db):
    rec = build_record()
    args = json.dumps({"patient": rec.subject_id, "category": "laboratory", "code": "creatinine", "_count": 1})
    out = json.loads(run("ehr_tool", "Observation.search", args, "--current-date", "2180-07-20"))
    assert out["entry"][0]["resource"]["valueQuantity"]["value"] == 2


def test_tool_command_session_options(db):
    rec = build_record()
    args = ("ehr_tool", "Flag.create", '{"code": "Fall risk"}', "--current-date", "2180-07-20")
    out = json.loads(run(*args, "--subject-id", str(rec.subject_id), "--hadm-id", str(rec.current_hadm)))
    assert out["_simulated"] is True
    assert out["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}


def test_tool_command_reports_argument_errors_as_json_and_fails(db):
    out = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command("ehr_tool", "Patient.read", '{"patient": 1}', "--current-date", "2180-07-20", stdout=out)
    assert set(json.loads(out.getvalue())) == {"error", "hint"}
    assert excinfo.value.returncode == 2
    assert excinfo.value.args[0].startswith("Patient.read: ")


@pytest.mark.parametrize(
    "args,needle",
    [
        (("Nope.search", "{}", "--current-date", "2180-07-20"), "unknown tool"),
        (("Patient.read", "{bad", "--current-date", "2180-07-20"), "not valid JSON"),
        (("Patient.read", "[1]", "--current-date", "2180-07-20"), "JSON object"),
        (("Patient.read", "{}", "--current-date", "20-07-2180"), "not a date"),
    ],
)
def test_tool_command_bad_input(db, args, needle):
    with pytest.raises(CommandError, match=needle):
        call_command("ehr_tool", *args)
