"""Patient.read, Encounter.search, Condition.search and Procedure.search, with the date cutoff."""

import datetime as dt

from tests.ehr.factories import call_tool as call


def ids(bundle):
    return [e["resource"]["id"] for e in bundle["entry"]]


# --- Patient.read ----------------------------------------------------------------------------


def test_patient_read(rec):
    out = call(rec, "Patient.read")
    assert out["resourceType"] == "Patient"
    assert out["id"] == str(rec.subject_id)
    assert out["gender"] == "female"
    # anchor_age 60 in anchor_year 2178 → 62 in 2180
    age = next(e["valueInteger"] for e in out["extension"] if e["url"] == "mimic-iv/age-at-current-date")
    assert age == 62
    assert out["birthDate"] == "2118"
    assert out["deceasedBoolean"] is False  # dod 2181-01-05 is in the future
    assert out["maritalStatus"] == {"text": "WIDOWED"}  # from the latest visible admission
    assert out["communication"][0]["language"]["text"] == "ENGLISH"


def test_patient_death_visible_once_it_happened(rec):
    # dod is a date: visible iff dod < current_date, so not yet on the day itself
    on_the_day = call(rec, "Patient.read", current_date=dt.date(2181, 1, 5))
    assert on_the_day["deceasedBoolean"] is False and "deceasedDateTime" not in on_the_day
    out = call(rec, "Patient.read", current_date=dt.date(2181, 1, 6))
    assert out["deceasedDateTime"] == "2181-01-05"
    assert "deceasedBoolean" not in out
    age = next(e["valueInteger"] for e in out["extension"] if e["url"] == "mimic-iv/age-at-current-date")
    assert age == 63


# --- Encounter.search ------------------------------------------------------------------------


def test_encounters_hide_future_admission_and_discharge(rec):
    out = call(rec, "Encounter.search")
    assert ids(out) == [str(rec.current_hadm), str(rec.past_hadm)]
    current, past = (e["resource"] for e in out["entry"])
    assert current["status"] == "in-progress"
    assert current["period"] == {"start": "2180-07-18 08:00:00"}  # discharge 2180-07-24 not yet known
    assert "dischargeDisposition" not in current.get("hospitalization", {})
    assert [loc["location"]["display"] for loc in current["location"]] == ["Emergency Department", "Medicine"]
    assert current["location"][0]["status"] == "completed" and current["location"][1]["status"] == "active"
    assert "end" not in current["location"][1]["period"]
    assert current["serviceType"]["text"] == "MED"  # CMED from 2180-07-22 not yet
    assert current["class"]["code"] == "IMP"
    assert past["status"] == "finished"
    assert past["period"]["end"] == "2179-03-06 12:00:00"
    assert past["hospitalization"]["dischargeDisposition"] == {"text": "HOME"}


def test_encounters_later_date_shows_everything(rec):
    out = call(rec, "Encounter.search", current_date=dt.date(2180, 12, 31))
    assert ids(out) == [str(rec.future_hadm), str(rec.current_hadm), str(rec.past_hadm)]
    current = out["entry"][1]["resource"]
    assert current["status"] == "finished"
    assert current["serviceType"]["text"] == "CMED"
    assert len(current["location"]) == 3


def test_encounter_filters(rec):
    assert ids(call(rec, "Encounter.search", hadm_id=rec.past_hadm)) == [str(rec.past_hadm)]
    assert ids(call(rec, "Encounter.search", hadm_id=rec.current_hadm)) == [str(rec.current_hadm)]


def test_encounter_filters_outside_the_contract_are_dropped(rec):
    # The released contract has only subject_id and hadm_id: status, dates and _count filter nothing.
    everything = call(rec, "Encounter.search")
    for extra in ({"status": "finished"}, {"date_from": "2180-01-01"}, {"date_to": "2179-12-31"}, {"_count": 1}):
        out = call(rec, "Encounter.search", **extra)
        (name,) = extra
        assert out.pop("warnings") == [
            f"unknown argument '{name}' ignored; Encounter.search takes: subject_id, hadm_id"
        ]
        assert out == everything


def test_future_encounter_is_not_found(rec):
    out = call(rec, "Encounter.search", hadm_id=rec.future_hadm)
    assert "error" in out and str(rec.future_hadm) in out["error"]


# --- Condition.search ------------------------------------------------------------------------


def test_conditions_newest_admission_first_principal_first(rec):
    out = call(rec, "Condition.search")
    titles = [e["resource"]["code"]["text"] for e in out["entry"]]
    # the future admission's pneumonia is hidden
    assert titles == [
        "Acute kidney failure, unspecified",
        "Unspecified atrial fibrillation",
        "Unspecified essential hypertension",
    ]
    aki = out["entry"][0]["resource"]
    assert aki["resourceType"] == "Condition"
    assert aki["code"]["coding"][0] == {
        "system": "http://hl7.org/fhir/sid/icd-10-cm",
        "code": "N179",
        "display": "Acute kidney failure, unspecified",
    }
    assert aki["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}
    assert "recordedDate" not in aki  # coded at discharge, which is after the current date
    htn = out["entry"][2]["resource"]
    assert htn["code"]["coding"][0]["system"] == "http://hl7.org/fhir/sid/icd-9-cm"
    assert htn["recordedDate"] == "2179-03-06 12:00:00"


def test_condition_code_filters(rec):
    by_prefix = call(rec, "Condition.search", code="I48")
    assert [e["resource"]["code"]["coding"][0]["code"] for e in by_prefix["entry"]] == ["I4891"]
    by_dotted = call(rec, "Condition.search", code="I48.91")
    assert by_dotted["entry"] == by_prefix["entry"]
    by_words = call(rec, "Condition.search", code="atrial fibrillation")
    assert by_words["entry"] == by_prefix["entry"]
    assert call(rec, "Condition.search", code="pneumonia")["total"] == 0
    # the future admission starts 2180-09-01 09:00: its diagnoses show from the next day on
    assert call(rec, "Condition.search", code="pneumonia", current_date=dt.date(2180, 9, 1))["total"] == 0
    later = call(rec, "Condition.search", code="pneumonia", current_date=dt.date(2180, 9, 2))
    assert later["total"] == 1


def test_condition_encounter_filter(rec):
    out = call(rec, "Condition.search", hadm_id=rec.past_hadm)
    assert [e["resource"]["code"]["coding"][0]["code"] for e in out["entry"]] == ["4019"]


def test_condition_clinical_status(rec):
    def codes(out):
        return [e["resource"]["code"]["coding"][0]["code"] for e in out["entry"]]

    def statuses(out):
        return {e["resource"]["clinicalStatus"]["coding"][0]["code"] for e in out["entry"]}

    # coded in the current admission: active; only in earlier admissions: resolved
    active = call(rec, "Condition.search", clinical_status="active")
    assert codes(active) == ["N179", "I4891"] and statuses(active) == {"active"}
    resolved = call(rec, "Condition.search", clinical_status="resolved")
    assert codes(resolved) == ["4019"] and statuses(resolved) == {"resolved"}
    assert call(rec, "Condition.search", clinical_status="inactive") == resolved
    assert codes(call(rec, "Condition.search", code="I48", clinical_status="resolved")) == []


# --- Procedure.search ------------------------------------------------------------------------


def test_procedures_cutoff_and_shape(rec):
    out = call(rec, "Procedure.search")
    assert [e["resource"]["performedDateTime"] for e in out["entry"]] == ["2180-07-20", "2179-03-03"]
    proc = out["entry"][0]["resource"]
    assert proc["resourceType"] == "Procedure" and proc["status"] == "completed"
    assert proc["code"]["coding"][0]["system"] == "http://www.cms.gov/Medicare/Coding/ICD10"
    assert proc["code"]["text"].startswith("Performance of Urinary Filtration")
    # chartdate is a date: the procedure of 2180-07-22 is visible from 2180-07-23 on
    assert call(rec, "Procedure.search", current_date=dt.date(2180, 7, 22))["total"] == 2
    later = call(rec, "Procedure.search", current_date=dt.date(2180, 7, 23))
    assert later["total"] == 3


def test_procedure_filters(rec):
    past = call(rec, "Procedure.search", hadm_id=rec.past_hadm)
    assert past["total"] == 1
    assert past["entry"][0]["resource"]["code"]["coding"][0] == {
        "system": "http://hl7.org/fhir/sid/icd-9-cm",
        "code": "3995",
        "display": "Hemodialysis",
    }
    assert call(rec, "Procedure.search", hadm_id=rec.current_hadm)["total"] == 1
