"""DocumentReference, DiagnosticReport, CarePlan and AllergyIntolerance from MIMIC notes."""

import datetime as dt

from ehr.fhir import ToolContext, execute_tool
from ehr.fhir.notes import split_sections
from tests.ehr.factories import PAST_DISCHARGE_NOTE
from tests.ehr.factories import call_tool as call


def test_split_discharge_sections():
    titles = [s.title for s in split_sections(PAST_DISCHARGE_NOTE, kind="discharge")]
    assert titles[:3] == ["Header", "Service", "Allergies"]
    assert "History of Present Illness" in titles and titles[-1] == "Followup Instructions"
    hpi = next(
        s for s in split_sections(PAST_DISCHARGE_NOTE, kind="discharge") if s.title == "History of Present Illness"
    )
    assert "VS: 98.1" in hpi.text  # an inline "Label:" is not a section


def test_document_reference_sections_and_cutoff(rec):
    out = call(rec, "DocumentReference.search")
    # the current admission's discharge note (2180-07-24) and the CT (2180-07-22) are hidden
    assert out["total"] == 2
    kinds = [e["resource"]["type"]["text"] for e in out["entry"]]
    assert kinds == ["Diagnostic imaging study", "Discharge summary"]
    summary = out["entry"][1]["resource"]
    assert summary["resourceType"] == "DocumentReference"
    assert summary["id"].startswith("note-")
    assert summary["type"]["coding"][0]["code"] == "18842-5"
    assert summary["date"] == "2179-03-06 00:00:00"
    assert summary["context"]["encounter"] == [{"reference": f"Encounter/{rec.past_hadm}"}]
    sections = {s["title"]: s["text"] for s in summary["section"]}
    assert sections["Chief Complaint"] == "Headache and high blood pressure"
    assert sections["Discharge Medications"].startswith("1. Amlodipine 10 mg")


def test_document_reference_keyword_naming_a_section(rec):
    for query in ("Social History", "social history", "SOCIAL", "social_history"):
        out = call(rec, "DocumentReference.search", keyword=query)
        assert out["total"] == 1, query
        assert [s["title"] for s in out["entry"][0]["resource"]["section"]] == ["Social History"]
    hpi = call(rec, "DocumentReference.search", keyword="HPI")
    assert hpi["entry"][0]["resource"]["section"][0]["title"] == "History of Present Illness"
    assert call(rec, "DocumentReference.search", keyword="Nonexistent Heading")["total"] == 0


def test_document_reference_keyword_words_find_the_sections_containing_them(rec):
    out = call(rec, "DocumentReference.search", keyword="amlodipine")
    assert out["total"] == 1
    sections = {s["title"]: s["text"] for s in out["entry"][0]["resource"]["section"]}
    assert list(sections) == ["Medications on Admission", "Discharge Medications", "Discharge Instructions"]
    assert all("amlodipine" in text.lower() for text in sections.values())
    # the chest X-ray matches on its text, in its own sections
    congestion = call(rec, "DocumentReference.search", keyword="vascular congestion")
    assert [e["resource"]["type"]["text"] for e in congestion["entry"]] == ["Diagnostic imaging study"]
    assert {s["title"] for s in congestion["entry"][0]["resource"]["section"]} == {"Findings", "Impression"}


def test_document_reference_type_code(rec):
    radiology = call(rec, "DocumentReference.search", type_code="radiology")
    assert radiology["total"] == 1 and radiology["entry"][0]["resource"]["type"]["coding"][0]["code"] == "18748-4"
    assert call(rec, "DocumentReference.search", type_code="discharge-summary")["total"] == 1
    # the current stay's discharge note is charted 2180-07-24 00:00: visible from 2180-07-25 on
    on_the_day = call(rec, "DocumentReference.search", type_code="discharge-summary", current_date=dt.date(2180, 7, 24))
    assert on_the_day["total"] == 1
    later = call(rec, "DocumentReference.search", type_code="discharge-summary", current_date=dt.date(2180, 7, 25))
    assert later["total"] == 2
    assert later["entry"][0]["resource"]["context"]["encounter"][0]["reference"] == f"Encounter/{rec.current_hadm}"
    only_current = call(rec, "DocumentReference.search", hadm_id=rec.current_hadm, current_date=dt.date(2180, 7, 25))
    assert [e["resource"]["date"] for e in only_current["entry"]] == [
        "2180-07-24 00:00:00",
        "2180-07-22 15:00:00",
        "2180-07-18 11:00:00",
    ]


def test_diagnostic_report(rec):
    out = call(rec, "DiagnosticReport.search")
    assert out["total"] == 1  # the CT head on 2180-07-22 is hidden
    report = out["entry"][0]["resource"]
    assert report["resourceType"] == "DiagnosticReport"
    assert report["code"]["text"] == "CHEST (PA AND LAT)"
    assert report["conclusion"] == "Mild pulmonary vascular congestion."
    assert report["category"][0]["coding"][0]["code"] == "RAD"
    assert report["effectiveDateTime"] == "2180-07-18 11:00:00"
    assert [s["title"] for s in report["section"]] == ["Examination", "Indication", "Findings", "Impression"]
    # one section of a report: DocumentReference.search with a keyword naming it
    only = call(rec, "DocumentReference.search", type_code="radiology", keyword="impression")
    assert [s["title"] for s in only["entry"][0]["resource"]["section"]] == ["Impression"]
    # the CT head is charted 2180-07-22 15:00: visible from 2180-07-23 on
    assert call(rec, "DiagnosticReport.search", report_type="CT head", current_date=dt.date(2180, 7, 22))["total"] == 0
    later = call(rec, "DiagnosticReport.search", report_type="CT head", current_date=dt.date(2180, 7, 23))
    assert [e["resource"]["conclusion"] for e in later["entry"]] == ["No acute intracranial process."]
    assert call(rec, "DiagnosticReport.search", report_type="chest")["total"] == 1


def test_care_plan(rec):
    out = call(rec, "CarePlan.search")
    assert out["total"] == 1
    plan = out["entry"][0]["resource"]
    assert plan["resourceType"] == "CarePlan"
    assert plan["description"].startswith("You were admitted for very high blood pressure")
    assert [a["detail"]["description"] for a in plan["activity"]] == [
        "Primary care (Dr. ___) within 1 week",
        "Check blood pressure at home daily",
    ]
    assert plan["encounter"] == {"reference": f"Encounter/{rec.past_hadm}"}
    assert any("Discharge Disposition: Home" in n["text"] for n in plan["note"])
    later = call(rec, "CarePlan.search", current_date=dt.date(2180, 7, 25))
    assert later["entry"][0]["resource"]["description"] == "Stop lisinopril. Take warfarin as directed."


def test_care_plan_categories(rec):
    followup = call(rec, "CarePlan.search", category="followup")["entry"][0]["resource"]
    assert [a["detail"]["description"] for a in followup["activity"]] == [
        "Primary care (Dr. ___) within 1 week",
        "Check blood pressure at home daily",
    ]
    assert "description" not in followup and "note" not in followup
    treatment = call(rec, "CarePlan.search", category="treatment")["entry"][0]["resource"]
    assert [a["detail"]["description"] for a in treatment["activity"]] == [
        "1. Amlodipine 10 mg PO DAILY",
        "2. Metformin 500 mg PO BID",
    ]
    planning = call(rec, "CarePlan.search", category="discharge-planning")["entry"][0]["resource"]
    assert planning["description"].startswith("You were admitted") and "activity" not in planning


def test_allergies_from_latest_visible_note(rec):
    out = call(rec, "AllergyIntolerance.search")
    assert [e["resource"]["code"]["text"] for e in out["entry"]] == ["Penicillins", "Sulfa (Sulfonamide Antibiotics)"]
    allergy = out["entry"][0]["resource"]
    assert allergy["resourceType"] == "AllergyIntolerance"
    assert allergy["patient"] == {"reference": f"Patient/{rec.subject_id}"}
    later = call(rec, "AllergyIntolerance.search", current_date=dt.date(2180, 7, 25))
    assert [e["resource"]["code"]["text"] for e in later["entry"]] == ["Codeine"]


def test_no_known_allergies(rec):
    from tests.ehr.factories import DischargeNoteFactory, PatientFactory, at

    p = PatientFactory()
    DischargeNoteFactory(
        subject_id=p.subject_id,
        charttime=at("2180-01-01 00:00"),
        text="Allergies: \nPatient recorded as having No Known Allergies to Drugs\n \nChief Complaint:\nfall\n",
    )
    out = execute_tool(
        name="AllergyIntolerance.search",
        arguments={"subject_id": p.subject_id},
        context=ToolContext(current_date=dt.date(2180, 2, 1)),
    )
    assert out["total"] == 1
    assert out["entry"][0]["resource"]["code"]["coding"][0]["code"] == "716186003"
