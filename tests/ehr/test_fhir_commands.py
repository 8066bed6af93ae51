"""ehr_tools_schema and ehr_tool management commands."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ehr.fhir import TOOL_NAMES, api_name
from tests.ehr.factories import build_record


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("option", ["--language", "--lang"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_schema_command(lang, option):
    text = run("ehr_tools_schema", option, lang)
    schemas = json.loads(text)
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    if lang == "zh":
        assert "检索" in text  # written as UTF-8, not \u escapes


def test_schema_command_api_names_and_hash():
    names = [s["function"]["name"] for s in json.loads(run("ehr_tools_schema", "--api-names"))]
    assert "Observation__search" in names and "patient__get_pain_assessment" in names
    assert names == [api_name(n) for n in TOOL_NAMES]
    assert len(run("ehr_tools_schema", "--hash").strip()) == 64


def test_tool_command_runs_a_tool(db):
    rec = build_record()
    args = json.dumps({"subject_id": rec.subject_id, "category": "laboratory", "code": "creatinine", "_count": 1})
    out = json.loads(run("ehr_tool", "Observation.search", args, "--current-date", "2180-07-21"))
    assert out["entry"][0]["resource"]["valueQuantity"]["value"] == 2
    assert "warnings" not in out


def test_tool_command_bounds(db):
    rec = build_record()
    args = json.dumps({"subject_id": rec.subject_id, "type_code": "discharge-summary", "hadm_id": rec.current_hadm})
    strict = json.loads(run("ehr_tool", "DocumentReference.search", args, "--current-date", "2180-07-21"))
    release = json.loads(
        run("ehr_tool", "DocumentReference.search", args, "--current-date", "2180-07-21", "--bounds", "release")
    )
    assert strict["total"] == 0 and release["total"] == 1
    with pytest.raises(CommandError):
        call_command("ehr_tool", "Patient.read", "{}", "--current-date", "2180-07-21", "--bounds", "loose")


def test_tool_command_session_options(db):
    rec = build_record()
    flag = json.dumps({"category": "clinical", "code": "fall risk", "detail": "Fell at home"})
    args = ("ehr_tool", "Flag.create", flag, "--current-date", "2180-07-21")
    out = json.loads(run(*args, "--subject-id", str(rec.subject_id), "--hadm-id", str(rec.current_hadm)))
    assert out["_simulated"] is True
    assert out["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}


def test_tool_command_reports_argument_errors_as_json_and_fails(db):
    out = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command("ehr_tool", "Patient.read", '{"subject_id": 1}', "--current-date", "2180-07-21", stdout=out)
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
