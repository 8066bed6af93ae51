"""The released PhysAssistBench tool contract (shared/formats/pab-protocol.md), held here as data.

``ehr_tools_schema`` must print exactly this contract (names, parameter names, types, required
lists, enums) in English and Chinese. The argument layer must accept the FHIR-style names of our
earlier versions, the release's known wrong names and placeholder values of optional parameters,
with the same result as the canonical call: tested for every tool of the registry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from ehr.fhir import REGISTRY, TOOL_NAMES, ToolContext, api_name, execute_tool, register_patient_responder

INT, STR = "integer", "string"
SEARCH = (("subject_id", INT), ("hadm_id", INT))
PATIENT = (("subject_id", INT), ("session_id", STR))

# tool → (parameters in order as (name, type) or (name, type, enum), required), from pab-protocol.md's table
CONTRACT: dict[str, tuple[tuple[tuple, ...], tuple[str, ...]]] = {
    "Patient.read": ((("subject_id", INT),), ("subject_id",)),
    "Encounter.search": (SEARCH, ("subject_id",)),
    "Condition.search": (
        (*SEARCH, ("code", STR), ("clinical_status", STR, ("active", "resolved", "inactive"))),
        ("subject_id",),
    ),
    "Observation.search": (
        (
            *SEARCH,
            ("category", STR, ("laboratory", "vital-signs", "microbiology")),
            ("code", STR),
            ("date_from", STR),
            ("date_to", STR),
            ("_count", INT),
        ),
        ("subject_id",),
    ),
    "MedicationRequest.search": (
        (*SEARCH, ("medication", STR), ("status", STR, ("active", "completed", "stopped"))),
        ("subject_id",),
    ),
    "MedicationAdministration.search": ((*SEARCH, ("medication", STR)), ("subject_id",)),
    "DiagnosticReport.search": ((*SEARCH, ("report_type", STR)), ("subject_id",)),
    "DocumentReference.search": (
        (*SEARCH, ("type_code", STR, ("discharge-summary", "radiology")), ("keyword", STR)),
        ("subject_id",),
    ),
    "CarePlan.search": (
        (*SEARCH, ("category", STR, ("discharge-planning", "followup", "treatment"))),
        ("subject_id",),
    ),
    "Procedure.search": (SEARCH, ("subject_id",)),
    "AllergyIntolerance.search": (SEARCH, ("subject_id",)),
    "patient.get_symptom_history": ((*PATIENT, ("query", STR)), ("subject_id", "session_id")),
    "patient.get_medication_adherence": ((*PATIENT, ("drug", STR)), ("subject_id", "session_id")),
    "patient.get_social_history": (PATIENT, ("subject_id", "session_id")),
    "patient.get_functional_status": (PATIENT, ("subject_id", "session_id")),
    "patient.get_pain_assessment": (PATIENT, ("subject_id", "session_id")),
    "MedicationRequest.create": (
        (
            ("subject_id", INT),
            ("medication", STR),
            ("dose", STR),
            ("route", STR),
            ("frequency", STR),
            ("indication", STR),
            ("duration_days", INT),
        ),
        ("subject_id", "medication", "dose", "route", "frequency"),
    ),
    "ServiceRequest.create": (
        (
            ("subject_id", INT),
            ("service_type", STR),
            ("priority", STR, ("routine", "urgent", "asap")),
            ("note", STR),
            ("target_date", STR),
        ),
        ("subject_id", "service_type", "priority"),
    ),
    "Flag.create": (
        (
            ("subject_id", INT),
            ("category", STR, ("safety", "allergy", "administrative", "clinical")),
            ("code", STR),
            ("detail", STR),
        ),
        ("subject_id", "category", "code", "detail"),
    ),
    # stored sessions' form (at evaluation the release offers it without parameters)
    "prepare_to_answer": ((("answer_type", STR, ("tool", "chat")),), ()),
}


def expected_schema(name: str, *, api_names: bool) -> dict[str, Any]:
    """The contract's part of one schema: everything but the descriptions (ours, per language)."""
    params, required = CONTRACT[name]
    properties = {}
    for name_, type_, *enum in params:
        properties[name_] = {"type": type_, **({"enum": list(enum[0])} if enum else {})}
    return {
        "type": "function",
        "function": {
            "name": api_name(name) if api_names else name,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }


def without_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    fn = schema["function"]
    assert fn["description"].strip()
    properties = {}
    for name, prop in fn["parameters"]["properties"].items():
        assert prop["description"].strip(), (fn["name"], name)
        properties[name] = {k: v for k, v in prop.items() if k != "description"}
    parameters = {**fn["parameters"], "properties": properties}
    return {**schema, "function": {"name": fn["name"], "parameters": parameters}}


def printed_schemas(*options: str) -> list[dict[str, Any]]:
    out = StringIO()
    call_command("ehr_tools_schema", *options, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("api_names", [False, True])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_ehr_tools_schema_prints_the_released_contract(language, api_names):
    printed = printed_schemas("--language", language, *(["--api-names"] if api_names else []))
    assert [s["function"]["name"] for s in printed] == [
        api_name(n) if api_names else n for n in CONTRACT
    ]  # the table's tools, in its order, nothing else
    for schema in printed:
        got = without_descriptions(schema)
        name = next(n for n in CONTRACT if (api_name(n) if api_names else n) == schema["function"]["name"])
        assert got == expected_schema(name, api_names=api_names), name
        # parameter order as in the table too (dict equality ignores it)
        assert list(got["function"]["parameters"]["properties"]) == [p[0] for p in CONTRACT[name][0]], name


def test_the_registry_is_the_contract():
    assert list(TOOL_NAMES) == list(CONTRACT)
    for name, (params, required) in CONTRACT.items():
        tool = REGISTRY[name]
        assert [p.name for p in tool.params] == [p[0] for p in params], name
        assert tuple(p.name for p in tool.params if p.required) == required, name


# --- every tool: FHIR-style names, the release's wrong names, placeholders -------------------

SUBJECT = object()  # stands for the record's subject_id
HADM = object()  # the current admission's hadm_id
SESSION = "physassistbench_test_0"
PLACEHOLDERS = ("", "  ", 0, None)


@dataclass(frozen=True)
class Variant:
    arguments: dict[str, Any]
    dropped: tuple[str, ...] = ()  # argument names the call must drop (and name in `warnings`)


@dataclass(frozen=True)
class Case:
    canonical: dict[str, Any]
    fhir: tuple[Variant, ...]  # our earlier FHIR-style names
    wrong: tuple[Variant, ...] = ()  # the release's known wrong names (pab-protocol.md)
    # optional parameters to try placeholders on: the canonical call without them is the reference
    optional: tuple[str, ...] = field(default=())


def V(dropped: tuple[str, ...] = (), **arguments: Any) -> Variant:
    return Variant(arguments=arguments, dropped=dropped)


CASES: dict[str, Case] = {
    "Patient.read": Case({"subject_id": SUBJECT}, (V(patient=SUBJECT), V(patient_id=SUBJECT))),
    "Encounter.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM},
        (V(patient=SUBJECT, encounter=HADM), V(("status",), patient=SUBJECT, encounter=HADM, status="in-progress")),
        optional=("hadm_id",),
    ),
    "Condition.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM, "code": "I48", "clinical_status": "active"},
        (
            V(patient=SUBJECT, encounter=HADM, code="I48", status="active"),
            V(
                ("date_from",),
                patient=SUBJECT,
                encounter=HADM,
                code="I48",
                clinical_status="active",
                date_from="2180-01-01",
            ),
        ),
        (
            V(subject_id=SUBJECT, hadm_id=HADM, icd_code="I48", clinical_status="active"),
            V(subject_id=SUBJECT, hadm_id=HADM, diagnosis="I48", clinical_status="active"),
        ),
        optional=("hadm_id", "code", "clinical_status"),
    ),
    "Observation.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM, "category": "laboratory", "code": "creatinine", "_count": 2},
        (V(patient=SUBJECT, encounter=HADM, category="laboratory", code="creatinine", _count=2),),
        (
            V(subject_id=SUBJECT, hadm_id=HADM, category="laboratory", test_name="creatinine", _count=2),
            V(subject_id=SUBJECT, hadm_id=HADM, category="laboratory", lab_test="creatinine", _count=2),
            V(subject_id=SUBJECT, hadm_id=HADM, category="laboratory", item_name="creatinine", _count=2),
            V(subject_id=SUBJECT, hadm_id=HADM, type="laboratory", code="creatinine", limit=2),
            V(subject_id=SUBJECT, hadm_id=HADM, type="lab", vital_name="creatinine", limit=2),
        ),
        optional=("hadm_id", "category", "code", "date_from", "date_to", "_count"),
    ),
    "MedicationRequest.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM, "medication": "warfarin", "status": "active"},
        (V(patient=SUBJECT, encounter=HADM, code="warfarin", status="active"),),
        (
            V(subject_id=SUBJECT, hadm_id=HADM, drug="warfarin", status="active"),
            V(subject_id=SUBJECT, hadm_id=HADM, med="warfarin", status="active"),
        ),
        optional=("hadm_id", "medication", "status"),
    ),
    "MedicationAdministration.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM, "medication": "warfarin"},
        (
            V(patient=SUBJECT, encounter=HADM, code="warfarin"),
            V(("date_to",), patient=SUBJECT, encounter=HADM, code="warfarin", date_to="2180-07-30"),
        ),
        (V(subject_id=SUBJECT, hadm_id=HADM, drug="warfarin"), V(subject_id=SUBJECT, hadm_id=HADM, med="warfarin")),
        optional=("hadm_id", "medication"),
    ),
    "DiagnosticReport.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM, "report_type": "chest"},
        (
            V(patient=SUBJECT, encounter=HADM, code="chest"),
            V(("section",), patient=SUBJECT, encounter=HADM, code="chest", section="impression"),
        ),
        (V(subject_id=SUBJECT, hadm_id=HADM, type="chest"),),
        optional=("hadm_id", "report_type"),
    ),
    "DocumentReference.search": Case(
        {"subject_id": SUBJECT, "type_code": "discharge-summary", "keyword": "Social History"},
        (
            V(patient=SUBJECT, type="discharge", section="Social History"),
            V(("_count",), patient=SUBJECT, type="discharge", section="Social History", _count=5),
        ),
        (
            V(subject_id=SUBJECT, type="discharge-summary", query="Social History"),
            V(subject_id=SUBJECT, type_code="discharge-summary", query="Social History"),
        ),
        optional=("hadm_id", "type_code", "keyword"),
    ),
    "CarePlan.search": Case(
        {"subject_id": SUBJECT, "category": "followup"},
        (V(patient=SUBJECT, category="follow-up"), V(patient=SUBJECT, type="followup")),
        optional=("hadm_id", "category"),
    ),
    "Procedure.search": Case(
        {"subject_id": SUBJECT, "hadm_id": HADM},
        (V(patient=SUBJECT, encounter=HADM), V(("code",), patient=SUBJECT, encounter=HADM, code="5A1D70Z")),
        optional=("hadm_id",),
    ),
    "AllergyIntolerance.search": Case(
        {"subject_id": SUBJECT},
        (V(patient=SUBJECT), V(("clinical_status",), patient=SUBJECT, clinical_status="active")),
        optional=("hadm_id",),
    ),
    "patient.get_symptom_history": Case(
        {"subject_id": SUBJECT, "session_id": SESSION, "query": "chest pain"},
        (
            V(patient=SUBJECT, session_id=SESSION, symptom="chest pain"),
            V(patient=SUBJECT, session_id=SESSION, question="chest pain"),
        ),
        optional=("query",),
    ),
    "patient.get_medication_adherence": Case(
        {"subject_id": SUBJECT, "session_id": SESSION, "drug": "warfarin"},
        (V(patient=SUBJECT, session_id=SESSION, medication="warfarin"),),
        optional=("drug",),
    ),
    "patient.get_social_history": Case(
        {"subject_id": SUBJECT, "session_id": SESSION},
        (V(patient=SUBJECT, session_id=SESSION), V(("topic",), patient=SUBJECT, session_id=SESSION, topic="smoking")),
    ),
    "patient.get_functional_status": Case(
        {"subject_id": SUBJECT, "session_id": SESSION},
        (
            V(patient=SUBJECT, session_id=SESSION),
            V(("domain",), patient=SUBJECT, session_id=SESSION, domain="mobility"),
        ),
    ),
    "patient.get_pain_assessment": Case(
        {"subject_id": SUBJECT, "session_id": SESSION},
        (
            V(patient=SUBJECT, session_id=SESSION),
            V(("location",), patient=SUBJECT, session_id=SESSION, location="knee"),
        ),
    ),
    "MedicationRequest.create": Case(
        {
            "subject_id": SUBJECT,
            "medication": "apixaban",
            "dose": "2.5 mg",
            "route": "PO",
            "frequency": "BID",
            "indication": "atrial fibrillation",
            "duration_days": 30,
        },
        (
            V(
                patient=SUBJECT,
                medication="apixaban",
                dose="2.5 mg",
                route="PO",
                frequency="BID",
                reason="atrial fibrillation",
                duration_days=30,
            ),
            V(
                ("status", "intent"),
                patient=SUBJECT,
                medication="apixaban",
                dose="2.5 mg",
                route="PO",
                frequency="BID",
                indication="atrial fibrillation",
                duration_days=30,
                status="active",
                intent="order",
            ),
        ),
        (
            V(
                subject_id=SUBJECT,
                drug="apixaban",
                dose="2.5 mg",
                route="PO",
                frequency="BID",
                indication="atrial fibrillation",
                duration_days=30,
            ),
            V(
                subject_id=SUBJECT,
                med="apixaban",
                dose="2.5 mg",
                route="PO",
                frequency="BID",
                indication="atrial fibrillation",
                duration_days=30,
            ),
        ),
        optional=("indication", "duration_days"),
    ),
    "ServiceRequest.create": Case(
        {
            "subject_id": SUBJECT,
            "service_type": "basic metabolic panel",
            "priority": "asap",
            "note": "rising creatinine",
            "target_date": "2180-07-22",
        },
        (
            V(
                patient=SUBJECT,
                code="basic metabolic panel",
                priority="stat",
                reason="rising creatinine",
                occurrence_date="2180-07-22",
            ),
            V(
                ("category",),
                patient=SUBJECT,
                code="basic metabolic panel",
                priority="asap",
                note="rising creatinine",
                occurrence_date="2180-07-22",
                category="laboratory",
            ),
        ),
        optional=("note", "target_date"),
    ),
    "Flag.create": Case(
        {"subject_id": SUBJECT, "category": "safety", "code": "bleeding risk", "detail": "INR 4.2 on warfarin"},
        (
            V(patient=SUBJECT, category="drug", code="bleeding risk", note="INR 4.2 on warfarin"),
            V(
                ("priority",),
                patient=SUBJECT,
                category="safety",
                code="bleeding risk",
                detail="INR 4.2 on warfarin",
                priority="high",
            ),
        ),
    ),
    "prepare_to_answer": Case(
        {"answer_type": "tool"},
        (V(("summary",), answer_type="tool", summary="Cr rising"),),
        optional=("answer_type",),
    ),
}


def test_every_tool_has_a_case():
    assert set(CASES) == set(TOOL_NAMES)
    for name, case in CASES.items():
        params = {p.name: p for p in REGISTRY[name].params}
        assert set(case.canonical) <= set(params), name
        assert all(not params[o].required for o in case.optional), name


@pytest.fixture
def responder():
    """Patient tools answer with what they were asked, so equal answers mean equal arguments."""

    def answer(*, tool, arguments, context):
        return {"patient_response": json.dumps({"tool": tool, **arguments}, sort_keys=True)}

    register_patient_responder(answer)
    yield
    register_patient_responder(None)


def _fill(arguments: dict[str, Any], rec) -> dict[str, Any]:
    values = {id(SUBJECT): rec.subject_id, id(HADM): rec.current_hadm}
    return {k: values.get(id(v), v) for k, v in arguments.items()}


def _run(name: str, arguments: dict[str, Any], rec) -> dict[str, Any]:
    # The harness's context knows the session (as in a run); patient tools take their values from it.
    context = ToolContext(
        current_date=rec.current_date, subject_id=rec.subject_id, hadm_id=rec.current_hadm, session_id=SESSION
    )
    return execute_tool(name=name, arguments=_fill(arguments, rec), context=context)


def _assert_same(out: dict[str, Any], reference: dict[str, Any], *, dropped: tuple[str, ...], what: str) -> None:
    warnings = out.pop("warnings", None)
    if dropped:
        assert warnings is not None and len(warnings) == len(dropped), (what, warnings)
        for name, warning in zip(dropped, warnings, strict=True):
            assert f"'{name}'" in warning, (what, warning)
    else:
        assert warnings is None, (what, warnings)
    assert out == reference, what


def _canonical(name: str, rec) -> dict[str, Any]:
    out = _run(name, CASES[name].canonical, rec)
    assert "error" not in out, (name, out)
    assert "warnings" not in out, (name, out)
    if out.get("resourceType") == "Bundle":
        assert out["total"] >= 1 and out["entry"], (name, "the canonical call should find something")
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_fhir_style_names_give_the_canonical_result(rec, responder, name):
    reference = _canonical(name, rec)
    for variant in CASES[name].fhir:
        out = _run(name, variant.arguments, rec)
        _assert_same(out, reference, dropped=variant.dropped, what=(name, variant.arguments))


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.wrong])
def test_the_release_known_wrong_names_give_the_canonical_result(rec, responder, name):
    reference = _canonical(name, rec)
    for variant in CASES[name].wrong:
        out = _run(name, variant.arguments, rec)
        _assert_same(out, reference, dropped=variant.dropped, what=(name, variant.arguments))


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.optional])
def test_placeholders_of_optional_parameters_mean_not_given(rec, responder, name):
    case = CASES[name]
    _canonical(name, rec)
    for optional in case.optional:
        without = {k: v for k, v in case.canonical.items() if k != optional}
        reference = _run(name, without, rec)
        assert "error" not in reference and "warnings" not in reference, (name, optional, reference)
        for placeholder in PLACEHOLDERS:
            out = _run(name, {**without, optional: placeholder}, rec)
            _assert_same(out, reference, dropped=(), what=(name, optional, placeholder))
    # all optional parameters at once
    bare = {k: v for k, v in case.canonical.items() if k not in case.optional}
    reference = _run(name, bare, rec)
    for placeholder in PLACEHOLDERS:
        out = _run(name, {**bare, **dict.fromkeys(case.optional, placeholder)}, rec)
        _assert_same(out, reference, dropped=(), what=(name, "all", placeholder))


@pytest.mark.parametrize("name", list(CASES))
def test_unknown_arguments_are_dropped_and_named(rec, responder, name):
    reference = _canonical(name, rec)
    out = _run(name, {**CASES[name].canonical, "zz_unknown": 1, "verbose": True}, rec)
    takes = ", ".join(p.name for p in REGISTRY[name].params)
    assert out.pop("warnings") == [
        f"unknown argument 'zz_unknown' ignored; {name} takes: {takes}",
        f"unknown argument 'verbose' ignored; {name} takes: {takes}",
    ]
    assert out == reference


@pytest.mark.parametrize("name", list(CASES))
def test_the_api_safe_name_gives_the_canonical_result(rec, responder, name):
    reference = _canonical(name, rec)
    for alias in (api_name(name), name.replace(".", "_")):
        assert _run(alias, CASES[name].canonical, rec) == reference, alias
