"""The cutoff rule (visible iff before 00:00 of the current date) under both bounds modes.

``strict`` (default) bounds every tool by time; ``release`` reproduces the released tool layer:
only Observation.search is time-bounded (its ``date_to`` excluding its own day), the other tools
see the whole record, and statuses stay relative to the current date. See ehr/fhir/context.py.
"""

import datetime as dt

import pytest

from ehr.fhir import ToolContext, visibility_cutoff
from tests.ehr.factories import LabEventFactory, OmrFactory, at, call_tool

BOUNDS = ("strict", "release")


def values(bundle):
    return [e["resource"].get("valueQuantity", {}).get("value") for e in bundle["entry"]]


def ids(bundle):
    return [e["resource"]["id"] for e in bundle["entry"]]


def test_the_cutoff_is_the_start_of_the_current_date():
    assert visibility_cutoff(dt.date(2209, 5, 25)) == dt.datetime(2209, 5, 25, tzinfo=dt.UTC)
    ctx = ToolContext(current_date=dt.date(2209, 5, 25))
    assert ctx.bounds == "strict"
    assert ctx.time_visible(at("2209-05-24 23:59:59"))
    assert not ctx.time_visible(at("2209-05-25 00:00"))
    assert ctx.date_visible(dt.date(2209, 5, 24)) and not ctx.date_visible(dt.date(2209, 5, 25))


def test_unknown_bounds_are_refused():
    with pytest.raises(ValueError, match="strict, release"):
        ToolContext(current_date=dt.date(2180, 7, 21), bounds="loose")


# --- Observation.search: time-bounded under both ----------------------------------------------


@pytest.mark.parametrize("bounds", BOUNDS)
def test_a_lab_charted_at_0452_on_the_current_date_is_invisible(rec, bounds):
    # The release's example: "2209-05-25 04:52:00" <= "2209-05-25" is false.
    lab = LabEventFactory(
        subject_id=rec.subject_id, hadm_id=rec.current_hadm, charttime=at("2180-07-21 04:52"), valuenum=0.8
    )
    hidden = f"lab-{lab.labevent_id}"
    for arguments in (
        {"category": "laboratory", "code": "creatinine"},
        {"code": "creatinine"},
        {"category": "laboratory", "hadm_id": rec.current_hadm},
        {"category": "laboratory", "code": "creatinine", "date_to": "2180-07-21"},
        {"category": "laboratory", "code": "creatinine", "date_from": "2180-07-21"},
        {"_count": 500},
    ):
        out = call_tool(rec, "Observation.search", bounds=bounds, **arguments)
        assert hidden not in ids(out), (bounds, arguments)
    latest = call_tool(rec, "Observation.search", bounds=bounds, category="laboratory", code="creatinine", _count=1)
    assert latest["entry"][0]["resource"]["effectiveDateTime"] == "2180-07-20 23:30:00"
    # the next day it is there
    later = call_tool(rec, "Observation.search", dt.date(2180, 7, 22), bounds=bounds, code="creatinine", _count=2)
    assert values(later) == [2.4, 0.8]


@pytest.mark.parametrize("bounds", BOUNDS)
def test_vitals_and_cultures_of_the_current_date_are_invisible(rec, bounds):
    hr = call_tool(rec, "Observation.search", bounds=bounds, category="vital-signs", code="heart rate")
    # 90 bpm at 2180-07-21 08:00 is hidden; the release's vitals search has no date bound (issue 33)
    assert values(hr) == ([90, 110] if bounds == "release" else [110])
    micro = call_tool(rec, "Observation.search", bounds=bounds, category="microbiology", code="urine")
    assert micro["entry"][0]["resource"]["valueString"] == "Pending"  # stored 2180-07-22


def test_date_to_under_release_excludes_its_own_day(rec):
    strict = call_tool(rec, "Observation.search", category="laboratory", code="creatinine", date_to="2180-07-20")
    release = call_tool(
        rec, "Observation.search", bounds="release", category="laboratory", code="creatinine", date_to="2180-07-20"
    )
    assert values(strict) == [2, 1.6, 1.1, 1, 0.9]  # the whole of 2180-07-20 (2.0 at 23:30) included
    assert values(release) == [1.6, 1.1, 1, 0.9]  # "2180-07-20 23:30:00" <= "2180-07-20" is false
    one_day = {"category": "laboratory", "code": "creatinine", "date_from": "2180-07-19", "date_to": "2180-07-19"}
    assert values(call_tool(rec, "Observation.search", **one_day)) == [1.6]
    assert values(call_tool(rec, "Observation.search", bounds="release", **one_day)) == []


def test_date_to_under_release_excludes_its_own_day_for_outpatient_measurements(rec):
    OmrFactory(subject_id=rec.subject_id, chartdate=dt.date(2180, 1, 9), result_name="Weight (Lbs)", result_value="182")
    args = {"category": "vital-signs", "code": "weight", "date_to": "2180-01-10"}
    assert values(call_tool(rec, "Observation.search", **args)) == [180, 182]
    assert values(call_tool(rec, "Observation.search", bounds="release", **args)) == [182]


def test_date_to_after_the_current_date_does_not_lift_the_cutoff_under_release(rec):
    out = call_tool(
        rec, "Observation.search", bounds="release", category="laboratory", code="creatinine", date_to="2181-01-01"
    )
    assert values(out) == [2, 1.6, 1.1, 1, 0.9]  # 2.4 (session date) and 3.0 (future stay) stay hidden


# --- the other tools: bounded by time under strict only -----------------------------------------


def test_a_discharge_note_written_after_the_current_date(rec):
    # The current stay's discharge note is charted 2180-07-24, after the current date 2180-07-21.
    args = {"hadm_id": rec.current_hadm, "type_code": "discharge-summary"}
    strict = call_tool(rec, "DocumentReference.search", **args)
    release = call_tool(rec, "DocumentReference.search", bounds="release", **args)
    assert strict["total"] == 0 and strict["entry"] == []
    assert release["total"] == 1
    note = release["entry"][0]["resource"]
    assert note["date"] == "2180-07-24 00:00:00"
    assert {s["title"]: s["text"] for s in note["section"]}["Discharge Instructions"] == (
        "Stop lisinopril. Take warfarin as directed."
    )
    # without hadm_id too: the release bounds the other tools by the admission only, not by time
    everything = call_tool(rec, "DocumentReference.search", bounds="release", keyword="Discharge Instructions")
    assert [e["resource"]["date"] for e in everything["entry"]] == ["2180-07-24 00:00:00", "2179-03-06 00:00:00"]
    assert call_tool(rec, "DocumentReference.search", keyword="Discharge Instructions")["total"] == 1


@pytest.mark.parametrize(
    "name,arguments,strict_total,release_total",
    [
        ("DiagnosticReport.search", {}, 1, 2),  # the CT head of 2180-07-22
        ("CarePlan.search", {}, 1, 2),  # from the discharge note of 2180-07-24
        ("Procedure.search", {}, 2, 3),  # chartdate 2180-07-22
        ("MedicationAdministration.search", {}, 2, 3),  # the dose of 2180-07-21 21:00
        ("MedicationRequest.search", {}, 3, 4),  # vancomycin from 2180-07-21 10:00
        ("Encounter.search", {}, 2, 3),  # the future admission of 2180-09-01
        ("Condition.search", {}, 3, 4),  # its pneumonia
    ],
)
def test_other_tools_are_unbounded_by_time_under_release(rec, name, arguments, strict_total, release_total):
    assert call_tool(rec, name, **arguments)["total"] == strict_total
    assert call_tool(rec, name, bounds="release", **arguments)["total"] == release_total


def test_allergies_under_release_come_from_the_newest_note(rec):
    assert [e["resource"]["code"]["text"] for e in call_tool(rec, "AllergyIntolerance.search")["entry"]] == [
        "Penicillins",
        "Sulfa (Sulfonamide Antibiotics)",
    ]
    release = call_tool(rec, "AllergyIntolerance.search", bounds="release")
    assert [e["resource"]["code"]["text"] for e in release["entry"]] == ["Codeine"]


# --- statuses stay relative to the current date under release ----------------------------------


@pytest.mark.parametrize("bounds", BOUNDS)
def test_patient_age_is_at_the_current_date(rec, bounds):
    out = call_tool(rec, "Patient.read", bounds=bounds)
    age = next(e["valueInteger"] for e in out["extension"] if e["url"] == "mimic-iv/age-at-current-date")
    assert age == 62  # anchor_age 60 in 2178
    later = call_tool(rec, "Patient.read", dt.date(2183, 7, 21), bounds=bounds)
    assert next(e["valueInteger"] for e in later["extension"] if e["url"] == "mimic-iv/age-at-current-date") == 65


@pytest.mark.parametrize("bounds", BOUNDS)
def test_medication_status_is_relative_to_the_current_date(rec, bounds):
    def status(drug):
        (rx,) = (
            e["resource"] for e in call_tool(rec, "MedicationRequest.search", bounds=bounds, medication=drug)["entry"]
        )
        return rx

    warfarin = status("warfarin")  # stops 2180-07-25: still running on the current date
    lisinopril = status("lisinopril")  # stopped 2180-07-19
    assert lisinopril["status"] == "completed"
    active = call_tool(rec, "MedicationRequest.search", bounds=bounds, status="active")
    if bounds == "release":
        # issue 33, the release's rule (semantics file §1): a start and a stop time make an order completed,
        # with its stop time, whatever the current date; only an order without a stop time is active
        assert warfarin["status"] == "completed"
        assert warfarin["dispenseRequest"]["validityPeriod"]["end"] == "2180-07-25 12:00:00"
        assert status("vancomycin")["status"] == "completed"  # starts later that day; stops 2180-07-23
        assert all(e["resource"]["status"] == "active" for e in active["entry"])
    else:
        assert warfarin["status"] == "active"
        assert "end" not in warfarin["dispenseRequest"]["validityPeriod"]
        assert sorted(e["resource"]["medicationCodeableConcept"]["text"] for e in active["entry"]) == ["Warfarin"]


@pytest.mark.parametrize("bounds", BOUNDS)
def test_admission_in_progress_on_the_current_date(rec, bounds):
    out = call_tool(rec, "Encounter.search", bounds=bounds, hadm_id=rec.current_hadm)
    current = out["entry"][0]["resource"]
    # discharged 2180-07-24: in progress today; the release says finished for every admission (issue 33)
    assert current["status"] == ("finished" if bounds == "release" else "in-progress")
    statuses = {loc["location"]["display"]: loc["status"] for loc in current["location"]}
    assert statuses["Emergency Department"] == "completed" and statuses["Medicine"] == "active"
    if bounds == "release":
        # the later facts are there
        assert current["period"]["end"] == "2180-07-24 14:00:00"
        assert statuses["Medical Intensive Care Unit (MICU)"] == "active"
    else:
        assert "end" not in current["period"]


@pytest.mark.parametrize("bounds", BOUNDS)
def test_condition_status_is_relative_to_the_current_date(rec, bounds):
    out = call_tool(rec, "Condition.search", bounds=bounds, clinical_status="active")
    # the current admission's diagnoses, not the future admission's (it starts 2180-09-01)
    assert [e["resource"]["code"]["coding"][0]["code"] for e in out["entry"]] == ["N179", "I4891"]
