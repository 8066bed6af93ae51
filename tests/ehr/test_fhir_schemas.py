"""Tool schemas: names, API-safe mapping, EN/ZH parity, validity, hash."""

import re

import pytest

from ehr.fhir import API_NAME_RE, REGISTRY, TOOL_NAMES, api_name, canonical_name, schema_hash, tool_schemas

DESIGN_TOOL_NAMES = {
    "Patient.read",
    "Encounter.search",
    "Condition.search",
    "Observation.search",
    "MedicationRequest.search",
    "MedicationAdministration.search",
    "DiagnosticReport.search",
    "DocumentReference.search",
    "CarePlan.search",
    "Procedure.search",
    "AllergyIntolerance.search",
    "patient.get_symptom_history",
    "patient.get_medication_adherence",
    "patient.get_social_history",
    "patient.get_functional_status",
    "patient.get_pain_assessment",
    "MedicationRequest.create",
    "ServiceRequest.create",
    "Flag.create",
    "prepare_to_answer",
}
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_exactly_the_design_tool_names():
    assert set(TOOL_NAMES) == DESIGN_TOOL_NAMES
    assert len(TOOL_NAMES) == len(DESIGN_TOOL_NAMES)


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("api_safe", [False, True])
def test_schema_shape(language, api_safe):
    schemas = tool_schemas(language=language, api_safe_names=api_safe)
    assert len(schemas) == len(TOOL_NAMES)
    for schema in schemas:
        assert set(schema) == {"type", "function"} and schema["type"] == "function"
        fn = schema["function"]
        assert set(fn) == {"name", "description", "parameters"}
        assert fn["description"].strip()
        params = fn["parameters"]
        assert params["type"] == "object"
        for required in params["required"]:
            assert required in params["properties"], (fn["name"], required)
        for name, prop in params["properties"].items():
            assert prop["type"] in {"string", "integer", "number", "boolean"}, (fn["name"], name)
            assert prop["description"].strip()
            if "enum" in prop:
                assert prop["enum"] and all(isinstance(v, str) for v in prop["enum"])
            if "default" in prop and "enum" in prop:
                assert prop["default"] in prop["enum"]
        if api_safe:
            assert API_NAME_RE.match(fn["name"]), fn["name"]
        else:
            assert fn["name"] in REGISTRY


def test_api_names_round_trip_and_are_unique():
    mapped = [api_name(n) for n in TOOL_NAMES]
    assert len(set(mapped)) == len(mapped)
    assert api_name("Observation.search") == "Observation__search"  # the release's mapping
    assert api_name("patient.get_symptom_history") == "patient__get_symptom_history"
    for name in TOOL_NAMES:
        assert re.fullmatch(r"^[a-zA-Z0-9_-]{1,64}$", api_name(name))
        assert canonical_name(api_name(name)) == name
        assert canonical_name(name) == name
        assert canonical_name(name.replace(".", "_")) == name  # our API-safe names before the release's
    assert canonical_name("Observation.find") is None


def test_english_and_chinese_have_the_same_names_and_parameters():
    en = tool_schemas(language="en")
    zh = tool_schemas(language="zh")
    for e, z in zip(en, zh, strict=True):
        assert e["function"]["name"] == z["function"]["name"]
        ep, zp = e["function"]["parameters"], z["function"]["parameters"]
        assert ep["required"] == zp["required"]
        assert list(ep["properties"]) == list(zp["properties"])
        for name in ep["properties"]:
            strip = lambda p: {k: v for k, v in p.items() if k != "description"}  # noqa: E731
            assert strip(ep["properties"][name]) == strip(zp["properties"][name])
        assert CJK.search(z["function"]["description"]), z["function"]["name"]
        assert not CJK.search(e["function"]["description"]), e["function"]["name"]
        for name, prop in zp["properties"].items():
            assert CJK.search(prop["description"]), (z["function"]["name"], name)


def test_observation_search_parameters():
    fn = next(s["function"] for s in tool_schemas(language="en") if s["function"]["name"] == "Observation.search")
    props = fn["parameters"]["properties"]
    assert props["category"]["enum"] == ["laboratory", "vital-signs", "microbiology"]
    assert list(props) == ["subject_id", "hadm_id", "category", "code", "date_from", "date_to", "_count"]
    assert fn["parameters"]["required"] == ["subject_id"]
    assert "20" in props["_count"]["description"]  # the release's default count, told to the model


def test_schema_hash_is_stable_and_language_specific():
    assert schema_hash() == schema_hash()
    assert re.fullmatch(r"[0-9a-f]{64}", schema_hash())
    assert schema_hash(language="en") != schema_hash(language="zh") != schema_hash()


def test_unknown_language():
    with pytest.raises(ValueError):
        tool_schemas(language="fr")
