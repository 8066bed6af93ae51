"""Small MIMIC-IV-layout files written into a temporary folder, for importer tests.

Columns come from the TABLES registry, so the files follow the models. ``cohort`` writes a
consistent mini extract with what real files contain (empty hadm_id, non-numeric lab values,
empty reference ranges, ICD-9 and ICD-10 mixed, ``___``, empty dod, multi-line quoted notes).
"""

import csv
import gzip
import io
from pathlib import Path

from ehr.mimic_tables import TABLES

SUBJECTS = (10000032, 10000033, 10000034)


def csv_text(header: list[str], rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([["" if v is None else v for v in row] for row in rows])
    return buffer.getvalue()


def write_text(root: Path, stem: str, text: str, *, gz: bool = True) -> Path:
    """Write ``text`` as ``ROOT/STEM.csv.gz`` (or ``.csv``), replacing the other variant."""
    path = root / f"{stem}.csv.gz" if gz else root / f"{stem}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in (root / f"{stem}.csv.gz", root / f"{stem}.csv"):
        old.unlink(missing_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def write_table(
    root: Path, table: str, rows: list[dict[str, object]], *, gz: bool = True, header: list[str] | None = None
) -> Path:
    """Write rows (dicts by column; missing keys empty) of a registry table under its MIMIC path."""
    columns = header or TABLES[table].columns
    return write_text(root, TABLES[table].path, csv_text(columns, [[r.get(c) for c in columns] for r in rows]), gz=gz)


def patients() -> list[dict[str, object]]:
    return [
        {
            "subject_id": 10000032,
            "gender": "F",
            "anchor_age": 52,
            "anchor_year": 2180,
            "anchor_year_group": "2014 - 2016",
        },
        {"subject_id": 10000033, "gender": "M", "anchor_age": 71, "anchor_year": 2150, "dod": "2152-03-04"},
        {
            "subject_id": 10000034,
            "gender": "F",
            "anchor_age": 33,
            "anchor_year": 2160,
            "anchor_year_group": "2017 - 2019",
        },
    ]


def admissions() -> list[dict[str, object]]:
    return [
        {
            "subject_id": 10000032,
            "hadm_id": 22595853,
            "admittime": "2180-05-06 22:23:00",
            "dischtime": "2180-05-07 17:15:00",
            "admission_type": "URGENT",
            "race": "WHITE",
        },
        {
            "subject_id": 10000033,
            "hadm_id": 22841357,
            "admittime": "2152-02-27 00:00:00",
            "dischtime": "2152-03-04 14:00:00",
            "deathtime": "2152-03-04 14:00:00",
            "admission_type": "EW EMER.",
            "hospital_expire_flag": 1,
        },
        {"subject_id": 10000034, "hadm_id": 23000001, "admittime": "2160-01-01", "admission_type": "ELECTIVE"},
    ]


def d_labitems() -> list[dict[str, object]]:
    return [
        {"itemid": 50912, "label": "Creatinine", "fluid": "Blood", "category": "Chemistry"},
        {"itemid": 51006, "label": "Urea Nitrogen", "fluid": "Blood", "category": "Chemistry"},
        {"itemid": 51491, "label": "pH", "fluid": "Urine", "category": "Hematology"},
        {"itemid": 50820, "label": "pH", "fluid": "Blood", "category": "Blood Gas"},
    ]


def labevents() -> list[dict[str, object]]:
    base = {"specimen_id": 1, "charttime": "2180-05-06 23:00:00", "storetime": "2180-05-07 01:00:00"}
    return [
        {
            **base,
            "labevent_id": 1,
            "subject_id": 10000032,
            "hadm_id": 22595853,
            "itemid": 50912,
            "value": "1.2",
            "valuenum": 1.2,
            "valueuom": "mg/dL",
            "ref_range_lower": 0.4,
            "ref_range_upper": 1.1,
            "flag": "abnormal",
        },
        {
            **base,
            "labevent_id": 2,
            "subject_id": 10000032,
            "hadm_id": None,
            "itemid": 51006,
            "value": "<0.1",
            "valueuom": "mg/dL",
        },
        {**base, "labevent_id": 3, "subject_id": 10000032, "hadm_id": 22595853, "itemid": 51491, "value": "NEG"},
        {
            **base,
            "labevent_id": 4,
            "subject_id": 10000033,
            "hadm_id": 22841357,
            "itemid": 50912,
            "value": ">500",
            "comments": "___",
        },
        {
            **base,
            "labevent_id": 5,
            "subject_id": 10000033,
            "hadm_id": 22841357,
            "itemid": 50912,
            "value": "___",
            "storetime": None,
        },
        {
            **base,
            "labevent_id": 6,
            "subject_id": 10000034,
            "hadm_id": 23000001,
            "itemid": 50820,
            "value": "7.41",
            "valuenum": 7.41,
            "ref_range_lower": 7.35,
            "ref_range_upper": 7.45,
        },
    ]


def microbiologyevents() -> list[dict[str, object]]:
    base = {
        "micro_specimen_id": 7,
        "chartdate": "2180-05-06 00:00:00",
        "spec_itemid": 70012,
        "spec_type_desc": "BLOOD CULTURE",
        "test_seq": 1,
        "test_itemid": 90201,
        "test_name": "Blood Culture, Routine",
    }
    return [
        {
            **base,
            "microevent_id": 1,
            "subject_id": 10000032,
            "hadm_id": None,
            "org_name": "ESCHERICHIA COLI",
            "ab_name": "CEFTRIAXONE",
            "dilution_text": "<=1",
            "dilution_comparison": "<=",
            "dilution_value": 1,
            "interpretation": "S",
        },
        {
            **base,
            "microevent_id": 2,
            "subject_id": 10000033,
            "hadm_id": 22841357,
            "charttime": "2152-02-27 10:00:00",
            "comments": "NO GROWTH.",
        },
    ]


def d_icd_diagnoses() -> list[dict[str, object]]:
    return [
        {"icd_code": "5849", "icd_version": 9, "long_title": "Acute kidney failure, unspecified"},
        {"icd_code": "N179", "icd_version": 10, "long_title": "Acute kidney failure, unspecified"},
        {"icd_code": "I10", "icd_version": 10, "long_title": "Essential (primary) hypertension"},
    ]


def diagnoses_icd() -> list[dict[str, object]]:
    return [
        {"subject_id": 10000032, "hadm_id": 22595853, "seq_num": 1, "icd_code": "5849", "icd_version": 9},
        {"subject_id": 10000033, "hadm_id": 22841357, "seq_num": 1, "icd_code": "N179", "icd_version": 10},
        {"subject_id": 10000033, "hadm_id": 22841357, "seq_num": 2, "icd_code": "I10", "icd_version": 10},
    ]


NOTE_TEXT = (
    "Name:  ___                 Unit No:   ___\n\n"
    'Chief Complaint:\nShortness of breath, "worse" at night\n\n'
    "Discharge Medications:\n1. Furosemide 40 mg PO DAILY\n"
)


def discharge() -> list[dict[str, object]]:
    return [
        {
            "note_id": "10000032-DS-1",
            "subject_id": 10000032,
            "hadm_id": 22595853,
            "note_type": "DS",
            "note_seq": 1,
            "charttime": "2180-05-07 00:00:00",
            "text": NOTE_TEXT,
        },
        {
            "note_id": "10000033-DS-2",
            "subject_id": 10000033,
            "hadm_id": 22841357,
            "note_type": "DS",
            "note_seq": 2,
            "charttime": "2152-03-04 00:00:00",
            "storetime": "2152-03-05 10:00:00",
            "text": "Single line, with a comma.",
        },
    ]


COHORT = {
    "patients": patients,
    "admissions": admissions,
    "d_labitems": d_labitems,
    "labevents": labevents,
    "microbiologyevents": microbiologyevents,
    "d_icd_diagnoses": d_icd_diagnoses,
    "diagnoses_icd": diagnoses_icd,
    "discharge": discharge,
}


def cohort(root: Path, *, gz: bool = True) -> dict[str, int]:
    """Write the mini extract under ``root``; returns rows per table."""
    counts = {}
    for table, rows in COHORT.items():
        data = rows()
        write_table(root, table, data, gz=gz)
        counts[table] = len(data)
    return counts
