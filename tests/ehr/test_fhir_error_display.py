"""Refused calls: the model reads the English error and hint (byte-identical to the texts before the catalogue),
screens show them in the UI language with the call's own names and values kept (issue 16)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import translation

from ehr.fhir import ToolContext, execute_tool
from ehr.fhir.errors import ERRORS, HINTS, display_tool_error

CTX = ToolContext(current_date=dt.date(2180, 7, 21))
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_model_facing_texts_are_unchanged(rec):
    missing = execute_tool(name="Observation.search", arguments={"code": "creatinine"}, context=CTX)
    assert missing == {
        "error": "missing required argument 'subject_id' for Observation.search",
        "hint": "Pass subject_id (an integer), e.g. subject_id=10001234: Patient id (MIMIC subject_id).",
    }
    wrong = execute_tool(name="Observation.search", arguments={"subject_id": rec.subject_id, "code": 5}, context=CTX)
    assert wrong == {
        "error": "argument 'code' of Observation.search must be a string, got int 5",
        "hint": "Pass code as a string e.g. 'creatinine'.",
    }
    not_object = execute_tool(name="Patient.read", arguments="[1, 2]", context=CTX)
    assert not_object["error"] == "arguments of Patient.read must be a JSON object, got list"
    unknown = execute_tool(name="Observation.find", arguments={}, context=CTX)
    assert unknown["error"] == "unknown tool 'Observation.find'"
    assert unknown["hint"].startswith("Call one of the tools listed in the tool schemas. Did you mean: ")


BAD_CALLS = [
    ("Observation.search", {"code": "creatinine"}),
    ("Observation.search", '{"subject_id": 1,'),
    ("Patient.read", "[1, 2]"),
    ("Observation.find", {}),
    ("Observation.search", {"subject_id": "abc", "code": "creatinine"}),
    ("Observation.search", {"subject_id": 99999999, "code": "creatinine"}),
    ("Flag.create", {"subject_id": "REC", "category": "safety", "code": "  ", "detail": "x"}),
    ("Observation.search", {"subject_id": "REC", "category": "chemistry"}),
    ("Observation.search", {"subject_id": "REC", "code": "creatinine", "date_from": "yesterday"}),
    ("Observation.search", {"subject_id": "REC", "code": "creatinine", "date_from": "2180-02-30"}),
    (
        "Observation.search",
        {"subject_id": "REC", "code": "creatinine", "date_from": "2180-07-20", "date_to": "2180-07-01"},
    ),
    ("Observation.search", {"subject_id": "REC", "code": "zzzzqqq"}),
    ("patient.get_symptom_history", {}),
]


@pytest.mark.parametrize("name,arguments", BAD_CALLS)
def test_every_refusal_reads_in_chinese(rec, name, arguments):
    if isinstance(arguments, dict):
        arguments = {k: rec.subject_id if v == "REC" else v for k, v in arguments.items()}
    out = execute_tool(name=name, arguments=arguments, context=CTX)
    assert set(out) == {"error", "hint"}, out
    with translation.override("en"):
        assert display_tool_error(error=out["error"], hint=out["hint"]) == (out["error"], out["hint"])
    with translation.override("zh-hans"):
        error, hint = display_tool_error(error=out["error"], hint=out["hint"])
    assert CJK.search(error) and CJK.search(hint), (error, hint)
    assert error != out["error"] and hint != out["hint"]
    # The call's own names stay as the model wrote them.
    for name_in_text in re.findall(r"'(\w+)'", out["error"]):
        assert name_in_text in error


def test_hint_quotes_the_parameters_chinese_description(db):
    out = execute_tool(name="Patient.read", arguments={}, context=CTX)
    with translation.override("zh-hans"):
        error, hint = display_tool_error(error=out["error"], hint=out["hint"])
    assert error == "Patient.read 缺少必需参数“subject_id”"
    assert "Patient id" not in hint and "患者" in hint and "subject_id=10001234" in hint


def test_text_of_no_known_shape_is_shown_as_it_is():
    with translation.override("zh-hans"):
        assert display_tool_error(error="upstream said no", hint=None) == ("upstream said no", "")


def test_every_template_has_a_chinese_translation_with_its_placeholders():
    with translation.override("zh-hans"):
        for template in [*ERRORS.values(), *HINTS.values()]:
            shown = translation.gettext(template)
            assert CJK.search(shown), template
            assert sorted(re.findall(r"%\(\w+\)s", shown)) == sorted(re.findall(r"%\(\w+\)s", template)), template
