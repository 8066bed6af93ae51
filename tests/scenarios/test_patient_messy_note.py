"""A discharge note shaped like real MIMIC-IV: free-text HPI, ``___`` marks, missing sections."""

from __future__ import annotations

import datetime as dt

import pytest

from ehr import models as m
from scenarios.patient import PATIENT_TOOLS, answer_patient_tool, build_memory, check_answer, choose_persona
from scenarios.patient.persona import Persona

SUBJECT, HADM = 95_000_001, 96_000_001
ADMIT = dt.datetime(2150, 3, 1, 14, 5, tzinfo=dt.UTC)
CHARTED = dt.datetime(2150, 3, 5, tzinfo=dt.UTC)

MESSY_NOTE = """ \nName:  ___                     Unit No:   ___\n \nAdmission Date:  ___              \
Discharge Date:   ___\n \nDate of Birth:  ___             Sex:   M\n \nService: MEDICINE\n \nAllergies: \n\
Penicillins / ___ / Sulfa (Sulfonamide Antibiotics)\n \nAttending: ___.\n \nChief Complaint:\nchest pain, SOB\n \n\
Major Surgical or Invasive Procedure:\nnone\n\n\
History of Present Illness:\nMr. ___ is a ___ y/o M w/ h/o CAD s/p PCI ___, HTN, HLD who p/w \n\
substernal chest pressure that started 2 days ago while walking \nhis dog. Pain is ___ and radiates to ___. \
He rates it 8/10 \nat worst. It is worse with exertion and better with rest. He \nalso reports nausea and \
diaphoresis. He ran out of his \nclopidogrel about a week ago and has not been taking it. He takes \n\
ibuprofen most days for back pain. On ___, he went to ___ where a ___ was done.\n \n\
Past Medical History:\n- CAD s/p DES to LAD ___\n- HTN\n- HLD\n- GERD\n \n\
Social History:\n___\nFamily History:\nFather with MI at ___.\n \nPhysical Exam:\nVS: 98.1 ___ 18 98%RA\n \n\
Discharge Medications:\n1. Clopidogrel 75 mg PO DAILY \n2. Atorvastatin 80 mg PO QPM \n3. ___ 25 mg PO DAILY \n\
4. Metoprolol Succinate XL 50 mg PO DAILY16 \n \nDischarge Disposition:\nHome\n \nDischarge Condition:\n\
Mental Status: Clear and coherent.\nLevel of Consciousness: Alert and interactive.\n\
Activity Status: Ambulatory - Independent.\n \nFollowup Instructions:\n___\n"""


@pytest.fixture
def messy(db):
    m.Patient.objects.create(subject_id=SUBJECT, gender="M", anchor_age=70, anchor_year=2150)
    m.Admission.objects.create(
        subject_id=SUBJECT, hadm_id=HADM, admittime=ADMIT, dischtime=CHARTED, admission_type="EW EMER."
    )
    m.DischargeNote.objects.create(
        note_id=f"{SUBJECT}-DS-1",
        subject_id=SUBJECT,
        hadm_id=HADM,
        note_type="DS",
        note_seq=1,
        charttime=CHARTED,
        text=MESSY_NOTE,
    )
    # The day after the note is charted: the first current date that shows it.
    return build_memory(subject_id=SUBJECT, hadm_id=HADM, current_date=CHARTED.date() + dt.timedelta(days=1))


def test_messy_note_gives_traceable_facts_and_never_uses_deid_spans(messy):
    memory = messy
    assert memory.dropped == []
    assert all("___" not in f.value and "___" not in f.evidence for f in memory.facts)
    slots = {f.slot for f in memory.of("symptom")}
    assert {"onset", "severity", "modifiers", "associated"} <= slots
    assert any("8/10" in f.value for f in memory.of("pain", "score"))
    assert [f.value for f in memory.of("chief_complaint")] == ["chest pain, SOB"]
    assert [f.value for f in memory.of("allergy")] == ["Penicillins", "Sulfa (Sulfonamide Antibiotics)"]
    # No admission list: the discharge list stands in; the de-identified drug line is skipped.
    home = memory.of("medication", "home")
    assert [f.attrs["name"] for f in home] == ["Clopidogrel", "Atorvastatin", "Metoprolol Succinate XL"]
    assert home[2].attrs["frequency"] == "DAILY"
    assert [f.value for f in memory.of("history")] == ["CAD s/p DES to LAD", "HTN", "HLD", "GERD"]
    assert memory.of("social") == []  # the section is only "___"
    clopidogrel = [f for f in memory.of("adherence") if "clopidogrel" in f.attrs.get("drugs", [])]
    assert clopidogrel and clopidogrel[0].attrs["nonadherent"]
    assert any("ibuprofen" in f.attrs.get("drugs", []) for f in memory.of("medication", "mentioned"))
    # The clopidogrel sentence says "ago" but is about a drug, not the symptom's onset.
    assert all("clopidogrel" not in f.value for f in memory.of("symptom"))


def test_messy_note_answers_are_grounded_in_both_languages(messy):
    memory = messy
    for literacy in ("low", "high"):
        persona = Persona(
            health_literacy=literacy, adherence="poor", anxiety_level="medium", info_completeness="full", seed="m"
        )
        for tool in PATIENT_TOOLS:
            for lang in ("en", "zh"):
                answer = answer_patient_tool(tool=tool, arguments={}, memory=memory, persona=persona, language=lang)
                assert answer["answer"] and check_answer(answer=answer, memory=memory) == []
                assert "___" not in answer["answer"]
    withheld = choose_persona(seed=1, memory=memory, overrides={"info_completeness": "critical_withheld"})
    critical = memory.by_id(withheld.critical_fact_id)
    assert "clopidogrel" in critical.attrs["drugs"]
    args = {"tool": "patient.get_medication_adherence", "memory": memory, "persona": withheld, "language": "en"}
    generic = answer_patient_tool(**args, arguments={})
    named = answer_patient_tool(**args, arguments={"drug": "Plavix (clopidogrel)"})
    old_name = answer_patient_tool(
        **args, arguments={"medication": "Plavix (clopidogrel)"}
    )  # stored before the contract
    assert old_name["facts"] == named["facts"]
    assert critical.id not in generic["facts"] and generic["withheld"]
    assert critical.id in named["facts"] and "ran out" in named["answer"]


def test_a_note_charted_after_the_current_date_gives_admission_time_facts_only(messy):
    during = build_memory(subject_id=SUBJECT, hadm_id=HADM, current_date=CHARTED.date() - dt.timedelta(days=1))
    assert during.dropped == []
    assert [f.value for f in during.of("chief_complaint")] == ["chest pain, SOB"]
    assert [f.value for f in during.of("allergy")] == ["Penicillins", "Sulfa (Sulfonamide Antibiotics)"]
    assert during.of("symptom") and during.of("history")
    # No admission list, and the discharge list does not stand in before discharge.
    assert during.of("medication", "home") == []
    # "Activity Status" is the discharge condition; the HPI's adherence statement is admission knowledge.
    assert all(f.source.section != "Discharge Condition" for f in during.facts)
    # (Without a home list clopidogrel is not a known drug name, so the statement is general adherence.)
    assert any("ran out" in f.value and f.attrs["nonadherent"] for f in during.of("adherence"))
    charted = {(f.source.start, f.source.end) for f in messy.facts}
    assert {(f.source.start, f.source.end) for f in during.facts} <= charted


def test_a_note_of_an_admission_not_started_yet_is_ignored(messy):
    before = build_memory(subject_id=SUBJECT, hadm_id=HADM, current_date=ADMIT.date() - dt.timedelta(days=1))
    assert before.facts == []
    answer = answer_patient_tool(
        tool="patient.get_symptom_history",
        arguments={},
        memory=before,
        persona=choose_persona(seed=1, memory=before),
        language="zh",
    )
    assert answer["facts"] == [] and answer["answer"]
