"""MedicationRequest.search and MedicationAdministration.search."""

import datetime as dt

import pytest

from tests.ehr.factories import call_tool as call


def drugs(bundle):
    return [e["resource"]["medicationCodeableConcept"]["text"] for e in bundle["entry"]]


def test_medication_requests_hide_later_orders(rec):
    out = call(rec, "MedicationRequest.search")
    assert sorted(drugs(out)) == ["Lisinopril", "Metformin", "Warfarin"]  # vancomycin starts on the session date
    assert out["total"] == 3
    starts = [e["resource"]["authoredOn"] for e in out["entry"]]
    assert starts == sorted(starts, reverse=True)


def test_medication_request_shape_and_status(rec):
    out = call(rec, "MedicationRequest.search", medication="warfarin")
    rx = out["entry"][0]["resource"]
    assert rx["resourceType"] == "MedicationRequest"
    assert rx["id"].startswith("rx-")
    assert rx["status"] == "active"  # stops 2180-07-25, after the current date
    assert rx["intent"] == "order"
    assert rx["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}
    dosage = rx["dosageInstruction"][0]
    assert dosage["doseAndRate"][0]["doseQuantity"] == {"value": 5, "unit": "mg"}
    assert dosage["route"]["text"] == "PO"
    assert dosage["timing"]["repeat"] == {"frequency": 1.0, "period": 1, "periodUnit": "d"}
    assert dosage["text"] == "5 mg PO 1 time per day"
    assert rx["dispenseRequest"]["validityPeriod"] == {"start": "2180-07-18 12:00:00"}  # stop time is the future
    lisinopril = call(rec, "MedicationRequest.search", medication="LISINOPRIL")["entry"][0]["resource"]
    assert lisinopril["status"] == "completed"
    assert lisinopril["dispenseRequest"]["validityPeriod"]["end"] == "2180-07-19 09:00:00"


def test_status_filter(rec):
    assert drugs(call(rec, "MedicationRequest.search", status="active")) == ["Warfarin"]
    assert sorted(drugs(call(rec, "MedicationRequest.search", status="completed"))) == ["Lisinopril", "Metformin"]
    assert drugs(call(rec, "MedicationRequest.search", status="stopped")) == drugs(
        call(rec, "MedicationRequest.search", status="completed")
    )
    # vancomycin starts 2180-07-21 10:00: visible, and active, from 2180-07-22 on
    later = call(rec, "MedicationRequest.search", status="active", current_date=dt.date(2180, 7, 22))
    assert sorted(drugs(later)) == ["Vancomycin", "Warfarin"]


def test_medication_request_filters(rec):
    assert drugs(call(rec, "MedicationRequest.search", hadm_id=rec.past_hadm)) == ["Metformin"]
    assert drugs(call(rec, "MedicationRequest.search", medication="metf")) == ["Metformin"]
    assert drugs(call(rec, "MedicationRequest.search", hadm_id=rec.current_hadm, medication="metf")) == []


def test_medication_administrations(rec):
    out = call(rec, "MedicationAdministration.search")
    assert out["total"] == 2  # the dose of the session date (2180-07-21 21:00) is hidden
    given, held = (e["resource"] for e in out["entry"])
    assert given["resourceType"] == "MedicationAdministration"
    assert given["id"].startswith("emar-")
    assert given["status"] == "completed"
    assert given["effectiveDateTime"] == "2180-07-19 21:00:00"
    assert given["request"]["reference"].startswith("MedicationRequest/rx-")
    assert given["context"] == {"reference": f"Encounter/{rec.current_hadm}"}
    assert held["status"] == "not-done"
    assert held["statusReason"] == [{"text": "Not Given"}]


def test_medication_administration_filters(rec):
    out = call(rec, "MedicationAdministration.search", medication="warfarin", current_date=dt.date(2180, 7, 22))
    assert [e["resource"]["effectiveDateTime"] for e in out["entry"]] == ["2180-07-21 21:00:00", "2180-07-19 21:00:00"]
    lisinopril = call(rec, "MedicationAdministration.search", medication="lisinopril")
    assert [e["resource"]["status"] for e in lisinopril["entry"]] == ["not-done"]
    assert call(rec, "MedicationAdministration.search", hadm_id=rec.past_hadm)["total"] == 0
    assert call(rec, "MedicationAdministration.search", hadm_id=rec.current_hadm)["total"] == 2


@pytest.mark.parametrize(
    "event,status",
    [
        ("Administered", "completed"),
        ("Delayed Administered", "completed"),
        ("Not Given", "not-done"),
        ("Held", "not-done"),
        ("Stopped", "stopped"),
        ("Started", "in-progress"),
        ("Documented", "unknown"),
    ],
)
def test_emar_status_mapping(event, status):
    from ehr.fhir.medications import emar_status

    assert emar_status(event) == status
