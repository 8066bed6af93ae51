"""A patient written by hand in the release's per-patient layout, for the release-contract tests (issue 33).

Nobody took these rows from MIMIC: they are invented, in the MIMIC-IV column layout
(``shared/mimic/tables.md``), shaped like what the release's split holds (pandas-written
``<subject>/<module>_<table>.csv.csv.gz``; labevents with an empty ``hadm_id`` so the column is
written ``29000002.0``; a prescription with a stop time after the session date and one without a
stop time). The release-shaped gold of ``release_contract_gold.json`` was derived by running the
release's own tool layer (``physassistbench/tools/tool_registry.call_tool`` with
``set_active_date(CURRENT_DATE)``, as its generator does) on exactly these files, outside this
repository; see ``tests/scenarios/test_release_contract.py``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.ehr.mimic_files import per_patient_cohort, write_table

SUBJECT = 19000001
PRIOR, CURRENT = 29000001, 29000002
CURRENT_DATE = dt.date(2190, 3, 14)


def _lab(n: int, hadm, itemid: int, when: str, value: float, uom: str, lo, hi, flag: str = "") -> dict:
    return {
        "labevent_id": 80000000 + n,
        "subject_id": SUBJECT,
        "hadm_id": hadm,
        "specimen_id": 70000000 + n,
        "itemid": itemid,
        "charttime": when,
        "storetime": when,
        "value": f"{value:g}",
        "valuenum": value,
        "valueuom": uom,
        "ref_range_lower": lo,
        "ref_range_upper": hi,
        "flag": flag,
        "priority": "ROUTINE",
    }


def tables() -> dict[str, list[dict[str, object]]]:
    creat, potassium, bun = 50912, 50971, 51006
    return {
        "patients": [
            {
                "subject_id": SUBJECT,
                "gender": "F",
                "anchor_age": 78,
                "anchor_year": 2188,
                "anchor_year_group": "2017 - 2019",
            }
        ],
        "admissions": [
            {
                "subject_id": SUBJECT,
                "hadm_id": PRIOR,
                "admittime": "2189-08-01 10:00:00",
                "dischtime": "2189-08-05 13:00:00",
                "admission_type": "URGENT",
                "admission_location": "EMERGENCY ROOM",
                "discharge_location": "HOME",
                "insurance": "Medicare",
                "language": "ENGLISH",
                "race": "WHITE",
                "hospital_expire_flag": 0,
            },
            {
                "subject_id": SUBJECT,
                "hadm_id": CURRENT,
                "admittime": "2190-03-10 14:00:00",
                "dischtime": "2190-03-16 12:00:00",
                "admission_type": "EW EMER.",
                "admission_location": "EMERGENCY ROOM",
                "discharge_location": "HOME HEALTH CARE",
                "insurance": "Medicare",
                "language": "ENGLISH",
                "race": "WHITE",
                "hospital_expire_flag": 0,
            },
        ],
        "diagnoses_icd": [
            {"subject_id": SUBJECT, "hadm_id": CURRENT, "seq_num": 1, "icd_code": "I5033", "icd_version": 10},
            {"subject_id": SUBJECT, "hadm_id": CURRENT, "seq_num": 2, "icd_code": "I4891", "icd_version": 10},
            {"subject_id": SUBJECT, "hadm_id": CURRENT, "seq_num": 3, "icd_code": "N179", "icd_version": 10},
            {"subject_id": SUBJECT, "hadm_id": PRIOR, "seq_num": 1, "icd_code": "I10", "icd_version": 10},
        ],
        "labevents": [
            _lab(1, PRIOR, creat, "2189-08-02 06:00:00", 1.0, "mg/dL", 0.4, 1.1),
            _lab(2, None, creat, "2190-02-20 09:00:00", 1.2, "mg/dL", 0.4, 1.1, "abnormal"),
            _lab(3, CURRENT, creat, "2190-03-11 05:30:00", 1.7, "mg/dL", 0.4, 1.1, "abnormal"),
            _lab(4, CURRENT, creat, "2190-03-12 06:10:00", 1.5, "mg/dL", 0.4, 1.1, "abnormal"),
            _lab(5, CURRENT, creat, "2190-03-13 05:50:00", 1.3, "mg/dL", 0.4, 1.1, "abnormal"),
            _lab(6, CURRENT, creat, "2190-03-14 06:00:00", 1.1, "mg/dL", 0.4, 1.1),
            _lab(7, CURRENT, creat, "2190-03-15 05:40:00", 1.0, "mg/dL", 0.4, 1.1),
            _lab(8, CURRENT, potassium, "2190-03-13 05:50:00", 5.6, "mEq/L", 3.3, 5.1, "abnormal"),
            _lab(9, CURRENT, bun, "2190-03-13 05:50:00", 38.0, "mg/dL", 6, 20, "abnormal"),
        ],
        "prescriptions": [
            _rx(PRIOR, "Metoprolol Tartrate", "2189-08-01 16:00:00", "2189-08-05 12:00:00", "25", "mg", "PO", 2),
            _rx(CURRENT, "Apixaban", "2190-03-10 20:00:00", "2190-03-16 11:00:00", "5", "mg", "PO/NG", 2),
            _rx(CURRENT, "Furosemide", "2190-03-11 08:00:00", "2190-03-12 08:00:00", "40", "mg", "IV", 2),
            _rx(CURRENT, "Furosemide", "2190-03-12 09:00:00", None, "20", "mg", "PO", 1),
        ],
        "emar": [
            _emar(1, "Apixaban", "2190-03-11 09:05:00", "Administered"),
            _emar(2, "Apixaban", "2190-03-12 21:10:00", "Not Given"),
            _emar(3, "Furosemide", "2190-03-11 08:20:00", "Administered"),
        ],
        "icustays": [
            {
                "subject_id": SUBJECT,
                "hadm_id": CURRENT,
                "stay_id": 39000001,
                "first_careunit": "Cardiac Vascular Intensive Care Unit (CVICU)",
                "last_careunit": "Cardiac Vascular Intensive Care Unit (CVICU)",
                "intime": "2190-03-11 02:00:00",
                "outtime": "2190-03-15 12:00:00",
                "los": 4.4,
            }
        ],
        "chartevents": [
            _vital(220045, "2190-03-12 08:00:00", 88),
            _vital(220045, "2190-03-13 08:00:00", 92),
            _vital(220045, "2190-03-15 08:00:00", 76),  # after the session date
            _vital(220179, "2190-03-13 08:00:00", 128),
            _vital(220615, "2190-03-12 04:00:00", 1.5),  # an ICU creatinine: not one the release's labs search reads
        ],
        "discharge": [
            _note("19000001-DS-1", PRIOR, "DS", "2189-08-05 14:00:00", PRIOR_NOTE),
            _note("19000001-DS-2", CURRENT, "DS", "2190-03-16 13:00:00", CURRENT_NOTE),  # written after the date
        ],
        "radiology": [
            _note(
                "19000001-RR-5",
                CURRENT,
                "RR",
                "2190-03-11 10:00:00",
                "EXAMINATION: CHEST (PA AND LAT)\nFINDINGS: Mild interstitial edema, small effusions.\n"
                "IMPRESSION: Mild pulmonary edema.",
            ),
        ],
        "procedures_icd": [
            {
                "subject_id": SUBJECT,
                "hadm_id": CURRENT,
                "seq_num": 1,
                "chartdate": "2190-03-12",
                "icd_code": "B246ZZZ",
                "icd_version": 10,
            },
        ],
    }


def _rx(hadm: int, drug: str, start: str, stop: str | None, dose: str, unit: str, route: str, per_day: int) -> dict:
    return {
        "subject_id": SUBJECT,
        "hadm_id": hadm,
        "pharmacy_id": 60000000 + int(start[5:7] + start[8:10] + start[11:13]),
        "poe_id": f"{SUBJECT}-{start[8:10]}{start[11:13]}",
        "starttime": start,
        "stoptime": stop,
        "drug_type": "MAIN",
        "drug": drug,
        "dose_val_rx": dose,
        "dose_unit_rx": unit,
        "doses_per_24_hrs": per_day,
        "route": route,
    }


PRIOR_NOTE = (
    "Name:  ___\n \nAllergies: \nNo Known Allergies / Adverse Drug Reactions\n \nChief Complaint:\npalpitations\n"
    " \nDischarge Instructions:\nTake your metoprolol twice a day.\n \nFollowup Instructions:\nCardiology in 2 weeks\n"
)
CURRENT_NOTE = (
    "Name:  ___\n \nAllergies: \nPenicillins\n \nChief Complaint:\nshortness of breath\n \n"
    "Discharge Condition:\nMental Status: Clear and coherent.\n \nDischarge Instructions:\n"
    "Weigh yourself every morning.\n \nFollowup Instructions:\nHeart failure clinic in 1 week\n"
)


def _vital(itemid: int, when: str, value: float) -> dict:
    return {
        "subject_id": SUBJECT,
        "hadm_id": CURRENT,
        "stay_id": 39000001,
        "caregiver_id": 1234,
        "charttime": when,
        "storetime": when,
        "itemid": itemid,
        "value": str(value),
        "valuenum": value,
        "valueuom": {220045: "bpm", 220179: "mmHg"}.get(itemid, "mg/dL"),
        "warning": 0,
    }


def _note(note_id: str, hadm: int, kind: str, when: str, text: str) -> dict:
    return {
        "note_id": note_id,
        "subject_id": SUBJECT,
        "hadm_id": hadm,
        "note_type": kind,
        "note_seq": 1,
        "charttime": when,
        "storetime": when,
        "text": text,
    }


def _emar(n: int, drug: str, when: str, event: str) -> dict:
    return {
        "subject_id": SUBJECT,
        "hadm_id": CURRENT,
        "emar_id": f"{SUBJECT}-{n}",
        "emar_seq": n,
        "charttime": when,
        "medication": drug,
        "event_txt": event,
        "scheduletime": when,
        "storetime": when,
    }


def dictionaries() -> dict[str, list[dict[str, object]]]:
    return {
        "d_labitems": [
            {"itemid": 50912, "label": "Creatinine", "fluid": "Blood", "category": "Chemistry"},
            {"itemid": 50971, "label": "Potassium", "fluid": "Blood", "category": "Chemistry"},
            {"itemid": 51006, "label": "Urea Nitrogen", "fluid": "Blood", "category": "Chemistry"},
        ],
        "d_icd_diagnoses": [
            {
                "icd_code": "I5033",
                "icd_version": 10,
                "long_title": "Acute on chronic diastolic (congestive) heart failure",
            },
            {"icd_code": "I4891", "icd_version": 10, "long_title": "Unspecified atrial fibrillation"},
            {"icd_code": "N179", "icd_version": 10, "long_title": "Acute kidney failure, unspecified"},
            {"icd_code": "I10", "icd_version": 10, "long_title": "Essential (primary) hypertension"},
        ],
        "d_items": [
            {
                "itemid": 220045,
                "label": "Heart Rate",
                "abbreviation": "HR",
                "linksto": "chartevents",
                "category": "Routine Vital Signs",
                "unitname": "bpm",
                "param_type": "Numeric",
            },
            {
                "itemid": 220179,
                "label": "Non Invasive Blood Pressure systolic",
                "abbreviation": "NBPs",
                "linksto": "chartevents",
                "category": "Routine Vital Signs",
                "unitname": "mmHg",
                "param_type": "Numeric",
            },
            {
                "itemid": 220615,
                "label": "Creatinine (serum)",
                "abbreviation": "Creatinine (serum)",
                "linksto": "chartevents",
                "category": "Labs",
                "unitname": "mg/dL",
                "param_type": "Numeric",
            },
        ],
        "d_icd_procedures": [
            {"icd_code": "B246ZZZ", "icd_version": 10, "long_title": "Ultrasonography of heart, invented title"},
        ],
    }


def write(root: Path) -> tuple[Path, Path]:
    """Write the dictionaries (standard layout) and the patient (per-patient layout); their two roots."""
    ref, split = root / "mimiciv", root / "split"
    for table, rows in dictionaries().items():
        write_table(ref, table, rows)
    per_patient_cohort(split, subjects=(SUBJECT,), tables=tables())
    return ref, split
