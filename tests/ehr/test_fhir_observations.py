"""Observation.search on a hand-built record: labs, vital signs, microbiology, date cutoff."""

import datetime as dt

from tests.ehr.factories import LabEventFactory, at, call_tool


def search(rec, current_date=None, **arguments):
    return call_tool(rec, "Observation.search", current_date, **arguments)


def values(bundle):
    return [e["resource"].get("valueQuantity", {}).get("value") for e in bundle["entry"]]


def test_lab_observation_shape(rec):
    out = search(rec, category="laboratory", code="creatinine", hadm_id=rec.current_hadm, _count=1)
    assert out["resourceType"] == "Bundle" and out["type"] == "searchset"
    obs = out["entry"][0]["resource"]
    assert obs["resourceType"] == "Observation"
    assert obs["id"].startswith("lab-")
    assert obs["status"] == "final"
    assert obs["category"][0]["coding"][0]["code"] == "laboratory"
    assert obs["code"]["coding"] == [{"system": "mimic-iv/itemid", "code": "50912", "display": "Creatinine"}]
    assert obs["code"]["text"] == "Creatinine"
    assert obs["subject"] == {"reference": f"Patient/{rec.subject_id}"}
    assert obs["encounter"] == {"reference": f"Encounter/{rec.current_hadm}"}
    assert obs["effectiveDateTime"] == "2180-07-20 23:30:00"
    assert obs["valueQuantity"] == {"value": 2, "unit": "mg/dL"}
    assert obs["referenceRange"] == [{"low": {"value": 0.5, "unit": "mg/dL"}, "high": {"value": 1.2, "unit": "mg/dL"}}]
    assert obs["interpretation"][0]["coding"][0]["code"] == "H"
    assert obs["specimen"] == {"display": "Blood"}


def test_labs_newest_first_and_cutoff_hides_later_results(rec):
    out = search(rec, category="laboratory", code="Creatinine", hadm_id=rec.current_hadm)
    # 2.4 on 2180-07-21 06:00 is charted on the session date itself (cutoff 00:00 of 2180-07-21): hidden;
    # 23:30 on the day before is visible
    assert values(out) == [2, 1.6, 1.1]
    assert out["total"] == 3
    times = [e["resource"]["effectiveDateTime"] for e in out["entry"]]
    assert times == sorted(times, reverse=True)


def test_next_day_reveals_the_next_result(rec):
    out = search(
        rec, current_date=dt.date(2180, 7, 22), category="laboratory", code="creatinine", hadm_id=rec.current_hadm
    )
    assert values(out)[0] == 2.4


def test_code_forms_are_equivalent(rec):
    base = search(rec, category="laboratory", code="creatinine")
    for code in ("CREATININE", "50912", "mimic-iv/itemid|50912", "Cr", "serum creatinine"):
        assert search(rec, category="laboratory", code=code)["entry"] == base["entry"], code


def test_exact_label_does_not_pull_in_urine_creatinine(rec):
    out = search(rec, category="laboratory", code="creatinine")
    assert {e["resource"]["code"]["text"] for e in out["entry"]} == {"Creatinine"}
    urine = search(rec, category="laboratory", code="creatinine, urine")
    assert [e["resource"]["code"]["text"] for e in urine["entry"]] == ["Creatinine, Urine"]


def test_partial_label_match(rec):
    out = search(rec, category="laboratory", code="troponin")
    assert [e["resource"]["code"]["text"] for e in out["entry"]] == ["Troponin T"]


def test_non_numeric_value_is_value_string(rec):
    obs = search(rec, category="laboratory", code="Troponin T")["entry"][0]["resource"]
    assert obs["valueString"] == "<0.01"
    assert "valueQuantity" not in obs
    assert obs["referenceRange"] == [{"high": {"value": 0.01, "unit": "ng/mL"}}]


def test_all_admissions_and_outpatient_labs_without_encounter(rec):
    out = search(rec, category="laboratory", code="creatinine")
    assert values(out) == [2, 1.6, 1.1, 1, 0.9]  # the future admission's 3.0 stays hidden
    outpatient = [e["resource"] for e in out["entry"] if "encounter" not in e["resource"]]
    assert [o["effectiveDateTime"] for o in outpatient] == ["2180-01-10 10:00:00"]


def test_count_and_total(rec):
    out = search(rec, category="laboratory", code="creatinine", _count=2)
    assert len(out["entry"]) == 2
    assert out["total"] == 5


def test_date_window_is_inclusive(rec):
    out = search(rec, category="laboratory", code="creatinine", date_from="2180-07-19", date_to="2180-07-19")
    assert values(out) == [1.6]
    out = search(rec, category="laboratory", code="creatinine", date_from="2180-07-19")
    assert values(out) == [2, 1.6]
    # date_to after the current date does not lift the cutoff
    out = search(rec, category="laboratory", code="creatinine", date_to="2181-01-01", hadm_id=rec.current_hadm)
    assert values(out) == [2, 1.6, 1.1]


def test_all_labs_without_code(rec):
    out = search(rec, category="laboratory", hadm_id=rec.current_hadm)
    assert {e["resource"]["code"]["text"] for e in out["entry"]} == {
        "Creatinine",
        "Potassium",
        "Creatinine, Urine",
        "Troponin T",
    }
    assert out["total"] == 6


def test_potassium_high_interpretation(rec):
    obs = search(rec, category="laboratory", code="K")["entry"][0]["resource"]
    assert obs["code"]["text"] == "Potassium"
    assert obs["interpretation"][0]["coding"][0]["display"] == "High"


def test_normal_interpretation_without_flag(rec):
    LabEventFactory(subject_id=rec.subject_id, hadm_id=rec.current_hadm, charttime=at("2180-07-20 05:00"), valuenum=0.8)
    out = search(rec, category="laboratory", code="creatinine", date_from="2180-07-20", date_to="2180-07-20")
    normal = next(e["resource"] for e in out["entry"] if e["resource"]["valueQuantity"]["value"] == 0.8)
    assert normal["interpretation"][0]["coding"][0]["code"] == "N"


def test_empty_result_for_known_code_without_rows(rec):
    out = search(rec, category="laboratory", code="potassium", hadm_id=rec.past_hadm)
    assert out == {"resourceType": "Bundle", "type": "searchset", "total": 0, "entry": []}


# --- vital signs -----------------------------------------------------------------------------


def test_vital_signs_from_chartevents_and_omr(rec):
    out = search(rec, category="vital-signs")
    codes = [e["resource"]["code"]["text"] for e in out["entry"]]
    assert "Heart Rate" in codes and "Non Invasive Blood Pressure systolic" in codes
    assert "Blood Pressure" in codes  # outpatient (omr)
    hr = [e["resource"] for e in out["entry"] if e["resource"]["code"]["text"] == "Heart Rate"]
    assert [h["valueQuantity"]["value"] for h in hr] == [110]  # 90 bpm on the session date is hidden
    assert hr[0]["category"][0]["coding"][0]["code"] == "vital-signs"
    assert hr[0]["id"].startswith("chart-")
    bp = next(e["resource"] for e in out["entry"] if e["resource"]["code"]["text"] == "Blood Pressure")
    assert [c["valueQuantity"]["value"] for c in bp["component"]] == [130, 85]
    weights = [e["resource"] for e in out["entry"] if e["resource"]["code"]["text"] == "Weight (Lbs)"]
    assert [w["valueQuantity"] for w in weights] == [{"value": 180, "unit": "Lbs"}]  # 2180-08-01 is hidden


def test_vital_by_alias_and_encounter(rec):
    out = search(rec, category="vital-signs", code="HR", hadm_id=rec.current_hadm)
    assert [e["resource"]["valueQuantity"]["value"] for e in out["entry"]] == [110]
    out = search(rec, category="vital-signs", code="weight")
    assert [e["resource"]["valueQuantity"]["value"] for e in out["entry"]] == [180]


def test_unknown_vital_code_is_error(rec):
    out = search(rec, category="vital-signs", code="zzzz")
    assert "error" in out and "hint" in out


# --- microbiology ----------------------------------------------------------------------------


def test_microbiology_organism_and_susceptibilities(rec):
    out = search(rec, category="microbiology", code="blood culture")
    assert out["total"] == 1  # the 2180-07-22 culture is after the cutoff
    obs = out["entry"][0]["resource"]
    assert obs["id"] == "micro-96000001-90201-1"
    assert obs["status"] == "final"
    assert obs["specimen"]["display"] == "BLOOD CULTURE"
    assert obs["valueCodeableConcept"]["text"] == "ESCHERICHIA COLI"
    comps = {c["code"]["text"]: c for c in obs["component"]}
    assert comps["CEFTRIAXONE"]["interpretation"][0]["coding"][0]["code"] == "S"
    assert comps["CIPROFLOXACIN"]["interpretation"][0]["coding"][0]["display"] == "Resistant"
    assert comps["CIPROFLOXACIN"]["valueString"] == ">=4"
    assert any(c["coding"][0]["code"] == "microbiology" for c in obs["category"])


def test_microbiology_result_stored_after_cutoff_is_pending(rec):
    out = search(rec, category="microbiology", code="urine")
    obs = out["entry"][0]["resource"]
    assert obs["status"] == "preliminary"
    assert obs["valueString"] == "Pending"
    assert "ENTEROCOCCUS" not in str(obs)
    later = search(rec, current_date=dt.date(2180, 7, 23), category="microbiology", code="urine")
    assert later["entry"][0]["resource"]["valueCodeableConcept"]["text"] == "ENTEROCOCCUS SP."


def test_microbiology_newest_first(rec):
    out = search(rec, category="microbiology", current_date=dt.date(2180, 7, 25))
    times = [e["resource"]["effectiveDateTime"] for e in out["entry"]]
    assert times == sorted(times, reverse=True) and len(times) == 3


# --- no category -------------------------------------------------------------------------------


def test_no_category_searches_every_kind(rec):
    out = search(rec, code="creatinine")
    assert {e["resource"]["code"]["text"] for e in out["entry"]} == {"Creatinine"}
    out = search(rec, code="heart rate")
    assert [e["resource"]["valueQuantity"]["value"] for e in out["entry"]] == [110]
    everything = search(rec, _count=500)
    cats = {e["resource"]["category"][-1]["coding"][0]["code"] for e in everything["entry"]}
    assert cats == {"laboratory", "vital-signs", "microbiology"}
    times = [e["resource"]["effectiveDateTime"] for e in everything["entry"]]
    assert times == sorted(times, reverse=True)


def test_no_category_unknown_code_is_error(rec):
    out = search(rec, code="qwertyuiop")
    assert "error" in out


def test_label_shared_by_two_fluids_means_blood_unless_qualified(rec):
    from tests.ehr.factories import DLabItemFactory

    DLabItemFactory(itemid=50931, label="Glucose", fluid="Blood")
    DLabItemFactory(itemid=51478, label="Glucose", fluid="Urine")
    lab = {"subject_id": rec.subject_id, "hadm_id": rec.current_hadm, "valueuom": "mg/dL"}
    LabEventFactory(**lab, itemid=50931, charttime=at("2180-07-19 06:00"), valuenum=180.0)
    LabEventFactory(**lab, itemid=51478, charttime=at("2180-07-19 07:00"), valuenum=None, value="NEG")
    blood = search(rec, category="laboratory", code="glucose")
    assert [e["resource"]["code"]["coding"][0]["code"] for e in blood["entry"]] == ["50931"]
    for code in ("urine glucose", "Glucose, Urine", "glucose (urine)"):
        urine = search(rec, category="laboratory", code=code)
        assert [e["resource"]["valueString"] for e in urine["entry"]] == ["NEG"], code
    assert search(rec, category="laboratory", code="51478")["total"] == 1


def test_several_codes_separated_by_commas(rec):
    out = search(rec, category="laboratory", code="creatinine, potassium", hadm_id=rec.current_hadm)
    assert {e["resource"]["code"]["text"] for e in out["entry"]} == {"Creatinine", "Potassium"}
    assert search(rec, category="laboratory", code="50912,50971", hadm_id=rec.current_hadm)["total"] == 4
    assert "error" in search(rec, category="laboratory", code="creatinine, nonsenseword")
