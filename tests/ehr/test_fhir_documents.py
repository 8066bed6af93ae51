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


def test_document_reference_section_filter(rec):
    for query in ("Social History", "social history", "SOCIAL", "social_history"):
        out = call(rec, "DocumentReference.search", section=query)
        assert out["total"] == 1, query
        assert [s["title"] for s in out["entry"][0]["resource"]["section"]] == ["Social History"]
    hpi = call(rec, "DocumentReference.search", section="HPI")
    assert hpi["entry"][0]["resource"]["section"][0]["title"] == "History of Present Illness"
    assert call(rec, "DocumentReference.search", section="Nonexistent Heading")["total"] == 0


def test_document_reference_type_and_date(rec):
    assert call(rec, "DocumentReference.search", type="radiology")["total"] == 1
    later = call(rec, "DocumentReference.search", type="discharge", current_date=dt.date(2180, 7, 24))
    assert later["total"] == 2
    assert later["entry"][0]["resource"]["context"]["encounter"][0]["reference"] == f"Encounter/{rec.current_hadm}"
    assert call(rec, "DocumentReference.search", date_from="2180-01-01")["total"] == 1


def test_diagnostic_report(rec):
    out = call(rec, "DiagnosticReport.search")
    assert out["total"] == 1  # the CT head on 2180-07-22 is hidden
    report = out["entry"][0]["resource"]
    assert report["resourceType"] == "DiagnosticReport"
    assert report["code"]["text"] == "CHEST (PA AND LAT)"
    assert report["conclusion"] == "Mild pulmonary vascular congestion."
    assert report["category"][0]["coding"][0]["code"] == "RAD"
    assert report["effectiveDateTime"] == "2180-07-18 11:00:00"
    only = call(rec, "DiagnosticReport.search", section="impression")
    assert [s["title"] for s in only["entry"][0]["resource"]["section"]] == ["Impression"]
    later = call(rec, "DiagnosticReport.search", code="CT head", current_date=dt.date(2180, 7, 22))
    assert [e["resource"]["conclusion"] for e in later["entry"]] == ["No acute intracranial process."]


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
    later = call(rec, "CarePlan.search", current_date=dt.date(2180, 7, 24))
    assert later["entry"][0]["resource"]["description"] == "Stop lisinopril. Take warfarin as directed."


def test_allergies_from_latest_visible_note(rec):
    out = call(rec, "AllergyIntolerance.search")
    assert [e["resource"]["code"]["text"] for e in out["entry"]] == ["Penicillins", "Sulfa (Sulfonamide Antibiotics)"]
    allergy = out["entry"][0]["resource"]
    assert allergy["resourceType"] == "AllergyIntolerance"
    assert allergy["patient"] == {"reference": f"Patient/{rec.subject_id}"}
    later = call(rec, "AllergyIntolerance.search", current_date=dt.date(2180, 7, 24))
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
        arguments={"patient": p.subject_id},
        context=ToolContext(current_date=dt.date(2180, 2, 1)),
    )
    assert out["total"] == 1
    assert out["entry"][0]["resource"]["code"]["coding"][0]["code"] == "716186003"
