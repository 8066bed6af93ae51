"""Small MIMIC-IV-layout files written into a temporary folder, for importer tests.

Columns come from the TABLES registry, so the files follow the models. ``cohort`` writes a
consistent mini extract with what real files contain (empty hadm_id, non-numeric lab values,
empty reference ranges, ICD-9 and ICD-10 mixed, ``___``, empty dod, multi-line quoted notes).
``per_patient_cohort`` writes the same rows the way the PhysAssistBench release has them: one
folder per subject_id, ``<module>_<table>.csv.csv.gz`` files written by pandas (``pandas_text``).
"""

import csv
import gzip
import io
import re
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


def _number(value: object) -> bool:
    return isinstance(value, int | float) or (
        isinstance(value, str) and re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)", value) is not None
    )


def _whole(value: object) -> bool:
    return isinstance(value, int) or (isinstance(value, str) and value.isdigit())


def pandas_text(header: list[str], rows: list[dict[str, object]], *, of: list[dict[str, object]] | None = None) -> str:
    """``rows`` as ``pd.read_csv(...).to_csv(index=False)`` writes them, column types inferred over ``of``.

    A column of numbers only is numeric: with an empty field it is float, so whole numbers are
    written ``22444183.0``; digits-only text (NDC codes) loses its leading zeros. ``of`` is the whole
    table the release split by patient (default: ``rows``).
    """
    whole = of if of is not None else rows
    kinds: dict[str, str] = {}
    for column in header:
        present = [r[column] for r in whole if r.get(column) not in (None, "")]
        if not present or not all(_number(v) for v in present):
            kinds[column] = "text"
        elif all(_whole(v) for v in present) and len(present) == len(whole):
            kinds[column] = "int"
        else:
            kinds[column] = "float"

    def cell(column: str, value: object) -> object:
        if value in (None, ""):
            return ""
        if kinds[column] == "int":
            return str(int(value))
        if kinds[column] == "float":
            return f"{int(value)}.0" if _whole(value) else repr(float(value))
        return value

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([[cell(c, r.get(c)) for c in header] for r in rows])
    return buffer.getvalue()


def write_patient_text(root: Path, subject_id: int | str, stem: str, text: str, *, suffix: str = ".csv.csv.gz") -> Path:
    """Write ``ROOT/SUBJECT/STEM+SUFFIX`` (``stem`` like ``hosp_labevents``); gzip if the suffix ends in ``.gz``."""
    path = root / str(subject_id) / f"{stem}{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if suffix.endswith(".gz") else data)
    return path


def per_patient_cohort(
    root: Path, *, subjects: tuple[int, ...], tables: dict[str, list[dict[str, object]]], suffix: str = ".csv.csv.gz"
) -> dict[str, int]:
    """The rows of ``subjects`` split into per-patient pandas-written files; returns rows per table."""
    counts: dict[str, int] = {}
    for table, rows in tables.items():
        spec = TABLES[table]
        for subject_id in subjects:
            mine = [r for r in rows if r["subject_id"] == subject_id]
            if mine:
                stem = spec.path.replace("/", "_")
                write_patient_text(root, subject_id, stem, pandas_text(spec.columns, mine, of=rows), suffix=suffix)
                counts[table] = counts.get(table, 0) + len(mine)
    return counts


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


def prescriptions() -> list[dict[str, object]]:
    """NDC codes as MIMIC writes them: 11 digits with leading zeros, ``0`` for none; empty poe_seq."""
    base = {"starttime": "2180-05-06 23:00:00", "stoptime": "2180-05-08 10:00:00", "drug_type": "MAIN"}
    return [
        {
            **base,
            "subject_id": 10000032,
            "hadm_id": 22595853,
            "pharmacy_id": 100,
            "poe_id": "10000032-1",
            "poe_seq": 1,
            "drug": "Furosemide",
            "formulary_drug_cd": "FURO40I",
            "ndc": "00409176230",
            "dose_val_rx": "40",
            "dose_unit_rx": "mg",
            "doses_per_24_hrs": 1.0,
            "route": "IV",
        },
        {**base, "subject_id": 10000032, "hadm_id": 22595853, "pharmacy_id": 101, "drug": "Bag", "ndc": "0"},
        {
            **base,
            "subject_id": 10000033,
            "hadm_id": 22841357,
            "pharmacy_id": 102,
            "poe_id": "10000033-7",
            "poe_seq": 7,
            "drug": "Metoprolol Tartrate",
            "ndc": "51079025520",
            "dose_val_rx": "12.5-25",
            "doses_per_24_hrs": 2.0,
        },
        {**base, "subject_id": 10000033, "hadm_id": 22841357, "pharmacy_id": 103, "drug": "Heparin", "ndc": None},
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
