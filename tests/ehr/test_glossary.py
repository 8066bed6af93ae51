"""The EN→ZH glossary covers every term the demo cohort uses, and the loader behaves as documented."""

import csv
import gzip
import re
from pathlib import Path

import pytest
from django.conf import settings

from ehr import glossary
from ehr.mimic_tables import TABLES
from ehr.synth.notes import HEADINGS, RADIOLOGY_HEADINGS

DEMO_DIR = Path(settings.BASE_DIR) / "ehr" / "data" / "demo_cohort"
CJK = re.compile(r"[\u4e00-\u9fff]")


def column(table: str, name: str) -> set[str]:
    with gzip.open(DEMO_DIR / f"{TABLES[table].path}.csv.gz", "rt", encoding="utf-8", newline="") as handle:
        return {row[name] for row in csv.DictReader(handle) if row[name]}


def note_section_lines(heading: str) -> set[str]:
    """Lines listed under one discharge-note section (diagnosis names, past medical history)."""
    found: set[str] = set()
    for text in column("discharge", "text"):
        block = text.split(f"\n{heading}\n", 1)[1].split("\n \n", 1)[0]
        for line in block.split("\n"):
            line = line.strip().removeprefix("- ")
            if line and line not in ("Primary:", "Secondary:", "Expired", "None"):
                found.add(line)
    return found


def used_terms() -> dict[str, set[str]]:
    """Every term of each glossary kind that appears in the shipped demo cohort."""
    notes = column("discharge", "text") | column("radiology", "text")
    inline = ("Sex:", "Service:", "Attending:", "Allergies:")
    headings = {
        h.removesuffix(":")
        for h in (*HEADINGS, *RADIOLOGY_HEADINGS, *inline)
        if any(re.search(rf"(^|\s){re.escape(h)}", text) for text in notes)
    }
    lab_values = column("labevents", "value")
    return {
        "lab": column("d_labitems", "label"),
        "fluid": column("d_labitems", "fluid"),
        "lab_category": column("d_labitems", "category"),
        "vital": column("d_items", "label"),
        "unit": (
            column("labevents", "valueuom")
            | column("chartevents", "valueuom")
            | column("d_items", "unitname")
            | column("prescriptions", "dose_unit_rx")
            | column("prescriptions", "form_unit_disp")
        ),
        "drug": column("prescriptions", "drug") | column("emar", "medication"),
        "route": column("prescriptions", "route"),
        "emar_event": column("emar", "event_txt"),
        "diagnosis": (
            column("d_icd_diagnoses", "long_title")
            | note_section_lines("Discharge Diagnosis:")
            | note_section_lines("Past Medical History:")
        ),
        "procedure": column("d_icd_procedures", "long_title"),
        "organism": column("microbiologyevents", "org_name"),
        "antibiotic": column("microbiologyevents", "ab_name"),
        "specimen": column("microbiologyevents", "spec_type_desc"),
        "micro_test": column("microbiologyevents", "test_name"),
        "interpretation": column("microbiologyevents", "interpretation"),
        "result": {v for v in lab_values if re.fullmatch(r"[A-Za-z]+", v)} | column("labevents", "flag"),
        "section": headings,
        "careunit": column("transfers", "careunit"),
        "omr": column("omr", "result_name"),
    }


def test_every_term_the_demo_cohort_uses_is_in_the_glossary():
    missing = {
        kind: sorted(t for t in terms if glossary.translate(term=t, kind=kind) is None)
        for kind, terms in used_terms().items()
    }
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"add these terms to ehr/data/glossary.json: {missing}"


def test_the_cohort_uses_each_kind_of_term():
    used = used_terms()
    assert set(used) == set(glossary.kinds())
    assert all(used[kind] for kind in used), [k for k, v in used.items() if not v]
    assert {"Creatinine", "Potassium", "INR(PT)", "Vancomycin"} <= used["lab"]
    assert {"Warfarin", "Apixaban", "Heparin", "Lisinopril", "Furosemide", "Spironolactone", "Insulin"} <= used["drug"]


def test_translations_are_chinese():
    for kind in glossary.kinds():
        for term, zh in glossary.terms(kind=kind).items():
            if kind == "unit" and not CJK.search(zh):
                assert zh in {"%", "×10³/微升"} or zh == term, (kind, term, zh)
                continue
            assert CJK.search(zh), (kind, term, zh)


def test_translate_is_case_insensitive_and_strips_heading_colons():
    assert glossary.translate(term="Creatinine") == "肌酐"
    assert glossary.translate(term="  creatinine ", kind="lab") == "肌酐"
    assert glossary.translate(term="WARFARIN", kind="drug") == "华法林"
    assert glossary.translate(term="Chief Complaint:", kind="section") == "主诉"
    assert glossary.translate(term="STAPH AUREUS COAG +") == "金黄色葡萄球菌（凝固酶阳性）"
    assert glossary.translate(term="mg/dL", kind="unit") == "毫克/分升"


def test_kind_narrows_the_lookup_and_unknowns_are_reported():
    # "Vancomycin" is both a drug and a lab (the level); the kind picks the right one.
    assert glossary.translate(term="Vancomycin", kind="drug") == "万古霉素"
    assert glossary.translate(term="Vancomycin", kind="lab") == "万古霉素血药浓度"
    assert glossary.translate(term="Creatinine", kind="drug") is None
    assert glossary.translate(term="no such term") is None
    with pytest.raises(KeyError, match="unknown glossary kind"):
        glossary.translate(term="Creatinine", kind="nonsense")
    with pytest.raises(KeyError, match="unknown glossary kind"):
        glossary.terms(kind="nonsense")


def test_glossary_file_is_loaded_once():
    glossary.translate(term="Sodium")
    before = glossary._load.cache_info()
    glossary.translate(term="Potassium")
    after = glossary._load.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 1
    with pytest.raises(TypeError):
        glossary.terms(kind="lab")["Sodium"] = "x"  # read-only view
