"""Every tool against the bundled demo cohort, subjects picked by querying (no hard-coded ids)."""

import datetime as dt
import json
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command

from ehr import models as m
from ehr.fhir import REGISTRY, ToolContext, execute_tool

SEARCH_TOOLS = [name for name, tool in REGISTRY.items() if tool.kind == "ehr" and name != "Patient.read"]
# Where each resource type keeps the time the cutoff applies to.
TIME_KEYS = ("effectiveDateTime", "authoredOn", "date", "performedDateTime", "created", "recordedDate")


@pytest.fixture
def cohort(demo_cohort):
    return demo_cohort


def day(value: dt.datetime | dt.date) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


def admission_with_labs() -> tuple[m.Admission, dt.date]:
    """An admission with results on at least two days, and the first of those days."""
    for adm in m.Admission.objects.order_by("hadm_id"):
        days = sorted(
            {day(t) for t in m.LabEvent.objects.filter(hadm_id=adm.hadm_id).values_list("charttime", flat=True)}
        )
        if len(days) >= 2:
            return adm, days[0]
    raise AssertionError("the demo cohort has no admission with labs on two days")


def resource_days(bundle: dict) -> list[str]:
    out = []
    for entry in bundle["entry"]:
        res = entry["resource"]
        for key in TIME_KEYS:
            if key in res:
                out.append(res[key][:10])
        if "period" in res and "start" in res["period"]:
            out.append(res["period"]["start"][:10])
    return out


def test_patient_read_for_every_patient(cohort):
    patients = list(m.Patient.objects.all())
    assert patients
    for p in patients:
        current = dt.date(p.anchor_year + 1, 6, 30)
        out = execute_tool(
            name="Patient.read", arguments={"subject_id": p.subject_id}, context=ToolContext(current_date=current)
        )
        assert out["resourceType"] == "Patient", out
        age = next(e["valueInteger"] for e in out["extension"] if e["url"] == "mimic-iv/age-at-current-date")
        assert age == p.anchor_age + 1
        assert out["gender"] in ("male", "female")
        assert ("deceasedDateTime" in out) == (p.dod is not None and p.dod < current)


@pytest.mark.parametrize("name", SEARCH_TOOLS)
def test_every_search_tool_respects_the_cutoff(cohort, name):
    adm, first_day = admission_with_labs()
    current = first_day + dt.timedelta(days=1)
    out = execute_tool(name=name, arguments={"subject_id": adm.subject_id}, context=ToolContext(current_date=current))
    assert out["resourceType"] == "Bundle", out
    assert out["total"] >= len(out["entry"])
    # visible iff charted before 00:00 of the current date
    assert all(d < current.isoformat() for d in resource_days(out)), (name, current, resource_days(out))
    # The cutoff hides something real: searched long after, the same query finds at least as much.
    later = execute_tool(
        name=name,
        arguments={"subject_id": adm.subject_id},
        context=ToolContext(current_date=current + dt.timedelta(days=3650)),
    )
    assert later["total"] >= out["total"]


@pytest.mark.parametrize(
    ("name", "arguments", "resource_type"),
    [
        ("Encounter.search", {}, "Encounter"),
        ("Condition.search", {}, "Condition"),
        ("Observation.search", {"category": "laboratory"}, "Observation"),
        ("Observation.search", {"category": "vital-signs"}, "Observation"),
        ("MedicationRequest.search", {}, "MedicationRequest"),
        ("MedicationAdministration.search", {}, "MedicationAdministration"),
        ("DocumentReference.search", {}, "DocumentReference"),
        ("DiagnosticReport.search", {}, "DiagnosticReport"),
        ("CarePlan.search", {}, "CarePlan"),
        ("AllergyIntolerance.search", {}, "AllergyIntolerance"),
    ],
)
def test_each_search_tool_finds_demo_records_at_discharge(cohort, name, arguments, resource_type):
    """The day after the discharge of an admission with a radiology report, every tool has something to say."""
    rad = m.RadiologyNote.objects.exclude(hadm_id=None).order_by("note_id").first()
    assert rad is not None, "the demo cohort has radiology reports"
    adm = m.Admission.objects.get(hadm_id=rad.hadm_id)
    ctx = ToolContext(current_date=day(adm.dischtime) + dt.timedelta(days=1))
    out = execute_tool(name=name, arguments={"subject_id": adm.subject_id, **arguments}, context=ctx)
    assert out["resourceType"] == "Bundle", out
    assert out["total"] >= 1 and out["entry"], (name, arguments)
    assert {e["resource"]["resourceType"] for e in out["entry"]} == {resource_type}
    # Newest first wherever the resource carries a time.
    days = resource_days(out)
    assert days == sorted(days, reverse=True), (name, days)


def test_radiology_report_sections_from_the_demo(cohort):
    rad = m.RadiologyNote.objects.exclude(hadm_id=None).order_by("note_id").first()
    ctx = ToolContext(current_date=day(rad.charttime) + dt.timedelta(days=1))
    out = execute_tool(name="DiagnosticReport.search", arguments={"subject_id": rad.subject_id}, context=ctx)
    ids = [e["resource"]["id"] for e in out["entry"]]
    assert any(rad.note_id in i for i in ids), ids
    report = next(e["resource"] for e in out["entry"] if rad.note_id in e["resource"]["id"])
    impression = rad.text.split("IMPRESSION:", 1)[1].strip().splitlines()[0]
    assert impression[:30] in report["conclusion"]
    assert "Impression" in {s["title"] for s in report["section"]}
    # one section: a DocumentReference keyword naming it
    docs = execute_tool(
        name="DocumentReference.search",
        arguments={
            "subject_id": rad.subject_id,
            "hadm_id": rad.hadm_id,
            "type_code": "radiology",
            "keyword": "impression",
        },
        context=ctx,
    )
    doc = next(e["resource"] for e in docs["entry"] if rad.note_id in e["resource"]["id"])
    assert [s["title"] for s in doc["section"]] == ["Impression"]
    assert impression[:30] in doc["section"][0]["text"]
    on_the_day = execute_tool(
        name="DiagnosticReport.search",
        arguments={"subject_id": rad.subject_id},
        context=ToolContext(current_date=day(rad.charttime)),
    )
    assert not any(rad.note_id in e["resource"]["id"] for e in on_the_day["entry"])


def test_lab_search_by_label_matches_the_database(cohort):
    adm, first_day = admission_with_labs()
    current = day(adm.dischtime) if adm.dischtime else first_day
    # an item whose label is unique (a label shared by two fluids, like "Glucose", means the blood one)
    labels = {i: lab for i, lab in m.DLabItem.objects.values_list("itemid", "label")}
    counts = {}
    for lab in labels.values():
        counts[(lab or "").lower()] = counts.get((lab or "").lower(), 0) + 1
    itemids = m.LabEvent.objects.filter(hadm_id=adm.hadm_id).values_list("itemid", flat=True).distinct()
    itemid = next(i for i in sorted(itemids) if labels.get(i) and counts[labels[i].lower()] == 1)
    label = labels[itemid]
    visible = m.LabEvent.objects.filter(
        hadm_id=adm.hadm_id, itemid=itemid, charttime__lt=ToolContext(current_date=current).cutoff
    )
    args = {"subject_id": adm.subject_id, "hadm_id": adm.hadm_id, "category": "laboratory", "code": str(itemid)}
    out = execute_tool(
        name="Observation.search", arguments={**args, "_count": 500}, context=ToolContext(current_date=current)
    )
    assert out["total"] == visible.count()
    assert {e["resource"]["id"] for e in out["entry"]} == {
        f"lab-{i}" for i in visible.values_list("labevent_id", flat=True)
    }
    by_label = execute_tool(
        name="Observation.search",
        arguments={**args, "code": label.upper(), "_count": 500},
        context=ToolContext(current_date=current),
    )
    assert {e["resource"]["id"] for e in out["entry"]} <= {e["resource"]["id"] for e in by_label["entry"]}
    times = [e["resource"]["effectiveDateTime"] for e in out["entry"]]
    assert times == sorted(times, reverse=True)


def test_labs_hidden_before_they_are_charted(cohort):
    adm, first_day = admission_with_labs()
    args = {"subject_id": adm.subject_id, "hadm_id": adm.hadm_id, "category": "laboratory", "_count": 500}
    on_first_day = execute_tool(name="Observation.search", arguments=args, context=ToolContext(current_date=first_day))
    # nothing of the current date itself is charted yet; here not even the admission (admitted that day)
    assert on_first_day.get("total", 0) == 0, on_first_day
    if adm.admittime.date() == first_day:
        assert f"Encounter {adm.hadm_id} not found" in on_first_day["error"]
    early = execute_tool(
        name="Observation.search", arguments=args, context=ToolContext(current_date=first_day + dt.timedelta(days=1))
    )
    late = execute_tool(
        name="Observation.search", arguments=args, context=ToolContext(current_date=first_day + dt.timedelta(days=60))
    )
    assert 0 < early["total"] < late["total"]
    assert all(d == first_day.isoformat() for d in resource_days(early))


def test_conditions_match_the_database(cohort):
    adm = m.Admission.objects.filter(hadm_id__in=m.DiagnosisIcd.objects.values("hadm_id")).order_by("hadm_id").first()
    current = day(adm.dischtime)
    out = execute_tool(
        name="Condition.search",
        arguments={"subject_id": adm.subject_id, "hadm_id": adm.hadm_id},
        context=ToolContext(current_date=current),
    )
    assert out["total"] == m.DiagnosisIcd.objects.filter(hadm_id=adm.hadm_id).count()
    assert all(e["resource"]["code"]["text"] for e in out["entry"])


def test_medications_found_by_drug_name(cohort):
    rx = m.Prescription.objects.exclude(starttime=None).order_by("starttime").first()
    if rx is None:
        pytest.skip("no prescriptions")
    out = execute_tool(
        name="MedicationRequest.search",
        arguments={"subject_id": rx.subject_id, "medication": rx.drug.lower()},
        context=ToolContext(current_date=day(rx.starttime) + dt.timedelta(days=1)),
    )
    assert f"rx-{rx.pharmacy_id}" in {e["resource"]["id"] for e in out["entry"]}


def test_discharge_note_sections_care_plan_and_allergies(cohort):
    note = m.DischargeNote.objects.order_by("charttime").first()
    assert note is not None, "the demo cohort has discharge notes"
    ctx = ToolContext(current_date=day(note.charttime) + dt.timedelta(days=1))
    docs = execute_tool(
        name="DocumentReference.search",
        arguments={"subject_id": note.subject_id, "type_code": "discharge-summary"},
        context=ctx,
    )
    titles = {s["title"] for s in docs["entry"][0]["resource"]["section"]}
    assert {"Chief Complaint", "Discharge Instructions"} <= titles
    plans = execute_tool(name="CarePlan.search", arguments={"subject_id": note.subject_id}, context=ctx)
    assert plans["total"] >= 1
    allergies = execute_tool(name="AllergyIntolerance.search", arguments={"subject_id": note.subject_id}, context=ctx)
    assert allergies["total"] >= 1
    before = execute_tool(
        name="DocumentReference.search",
        arguments={"subject_id": note.subject_id, "type_code": "discharge-summary"},
        context=ToolContext(current_date=day(note.charttime)),
    )
    assert f"note-{note.note_id}" not in {e["resource"]["id"] for e in before["entry"]}


def test_microbiology_organisms(cohort):
    row = m.MicrobiologyEvent.objects.exclude(org_name=None).exclude(ab_name=None).first()
    assert row is not None, "the demo cohort has susceptibility results"
    out = execute_tool(
        name="Observation.search",
        arguments={"subject_id": row.subject_id, "category": "microbiology", "_count": 500},
        context=ToolContext(current_date=dt.date(2300, 1, 1)),
    )
    organisms = [
        e["resource"]["valueCodeableConcept"]["text"] for e in out["entry"] if "valueCodeableConcept" in e["resource"]
    ]
    assert row.org_name in organisms


def test_writes_leave_the_cohort_unchanged(cohort):
    adm = m.Admission.objects.order_by("hadm_id").first()
    counts = {model.__name__: model.objects.count() for model in apps.get_app_config("ehr").get_models()}
    ctx = ToolContext(current_date=day(adm.admittime), subject_id=adm.subject_id, hadm_id=adm.hadm_id)
    calls = [
        ("MedicationRequest.create", {"medication": "Aspirin", "dose": "81 mg", "route": "PO", "frequency": "daily"}),
        ("ServiceRequest.create", {"service_type": "CBC", "priority": "routine"}),
        ("Flag.create", {"category": "clinical", "code": "fall risk", "detail": "Fell at home"}),
    ]
    for name, arguments in calls:
        out = execute_tool(name=name, arguments=arguments, context=ctx)
        assert out["_simulated"] is True and "warnings" not in out, out
    assert counts == {model.__name__: model.objects.count() for model in apps.get_app_config("ehr").get_models()}


def test_unknown_patient_and_command(cohort):
    missing = (m.Patient.objects.order_by("-subject_id").values_list("subject_id", flat=True).first() or 0) + 1
    out = execute_tool(
        name="Patient.read", arguments={"subject_id": missing}, context=ToolContext(current_date=dt.date(2180, 1, 1))
    )
    assert "not found" in out["error"]
    subject = m.Patient.objects.values_list("subject_id", flat=True).first()
    buf = StringIO()
    call_command(
        "ehr_tool", "Encounter.search", json.dumps({"subject_id": subject}), "--current-date", "2300-01-01", stdout=buf
    )
    assert json.loads(buf.getvalue())["total"] == m.Admission.objects.filter(subject_id=subject).count()
