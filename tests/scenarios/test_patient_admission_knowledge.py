"""Admission-time rule: during a stay the patient knows what they told the admitting team.

The admission's own discharge note is charted at discharge, so the EHR tools hide it during the
stay; the patient memory still reads its admission-time sections (and only those) from admittime.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from ehr import models as m
from ehr.fhir import ToolContext, execute_tool
from ehr.fhir.context import fmt_datetime, visibility_cutoff
from scenarios.patient import HealthMemory, Persona, answer_patient_tool, build_memory, check_answer, verify_memory
from scenarios.patient.answers import _NOTHING
from scenarios.patient.facts import Fact, Source, make_fact
from scenarios.patient.text import find_section, section_of
from scenarios.patient.verify import ADMISSION_SECTIONS

DISCHARGE_TIME = {
    "Brief Hospital Course",
    "Pertinent Results",
    "Physical Exam",
    "Major Surgical or Invasive Procedure",
    "Discharge Medications",
    "Discharge Disposition",
    "Discharge Diagnosis",
    "Discharge Condition",
    "Discharge Instructions",
    "Followup Instructions",
}
SYMPTOM_TOOL = "patient.get_symptom_history"


def _during_stay() -> tuple[m.DischargeNote, m.Admission, dt.date]:
    """The first demo note, its admission and the day after admittime (the note not charted yet)."""
    for note in m.DischargeNote.objects.order_by("subject_id", "charttime"):
        adm = m.Admission.objects.get(hadm_id=note.hadm_id)
        day = adm.admittime.date() + dt.timedelta(days=1)
        if note.charttime >= visibility_cutoff(day):
            return note, adm, day
    pytest.skip("no admission whose note is charted after the day after admittime")


def _memory(note: m.DischargeNote, day: dt.date) -> HealthMemory:
    return build_memory(subject_id=note.subject_id, hadm_id=note.hadm_id, current_date=day)


def _charted_day(note: m.DischargeNote) -> dt.date:
    """The first current date that shows the note (visible iff charted before 00:00 of the current date)."""
    return note.charttime.date() + dt.timedelta(days=1)


def _own(memory: HealthMemory, note: m.DischargeNote) -> list[Fact]:
    return [f for f in memory.facts if f.source.note_id == note.note_id]


def _persona() -> Persona:
    return Persona(health_literacy="medium", adherence="good", anxiety_level="low", info_completeness="full", seed="a")


def test_the_admission_story_is_known_the_day_after_admission(demo_cohort):
    note, adm, day = _during_stay()
    memory = _memory(note, day)
    assert memory.dropped == []
    assert verify_memory(memory=memory).facts == memory.facts
    for category in ("chief_complaint", "symptom", "allergy", "social", "history"):
        assert memory.of(category), category
    home = memory.of("medication", "home")
    assert home and all(f.source.section == "Medications on Admission" for f in home)
    own = _own(memory, note)
    assert own and all(f.source.visible_from == "admission" for f in own)
    assert {f.source.admittime for f in own} == {fmt_datetime(adm.admittime)}
    assert all(f.source.charttime == fmt_datetime(note.charttime) for f in own)  # the note's time stays true
    # The same fact, later charted, keeps its id (answers replayed by fact id stay valid).
    charted = _memory(note, _charted_day(note))
    assert {f.id for f in own} <= {f.id for f in charted.facts}


def test_no_fact_comes_from_a_discharge_time_section(demo_cohort):
    checked = 0
    for note in m.DischargeNote.objects.order_by("note_id"):
        adm = m.Admission.objects.get(hadm_id=note.hadm_id)
        # The first day the admission shows, and the last day its note is hidden (charted that day).
        for day in {adm.admittime.date() + dt.timedelta(days=1), note.charttime.date()}:
            if not adm.admittime < visibility_cutoff(day) <= note.charttime:
                continue
            memory = _memory(note, day)
            assert memory.dropped == [], (note.note_id, memory.dropped[:1])
            own = _own(memory, note)
            assert own and memory.of("chief_complaint"), (note.note_id, day)
            for fact in own:
                assert fact.source.section in ADMISSION_SECTIONS
                assert fact.source.section not in DISCHARGE_TIME
                assert section_of(note.text, fact.source.start) == fact.source.section
                assert note.text[fact.source.start : fact.source.end] == fact.evidence
                checked += 1
            # Function at discharge ("Activity Status: ...") is not known yet.
            assert all(f.source.section != "Discharge Condition" for f in memory.facts)
    assert checked > 100


def _planted(*, note: m.DischargeNote, adm: m.Admission, title: str, claimed: str | None = None) -> Fact:
    """A fact quoting the first line of ``title`` with admission-time provenance, claiming section ``claimed``."""
    section = find_section(note.text, title)
    assert section is not None, title
    body = note.text[section.start : section.end]
    first = next(line for line in body.splitlines() if line.strip() and "___" not in line)
    start = section.start + body.index(first.strip())
    evidence = first.strip()
    source = Source(
        kind="note",
        table="mimic_note_discharge",
        key={"note_id": note.note_id},
        section=claimed or title,
        start=start,
        end=start + len(evidence),
        charttime=fmt_datetime(note.charttime),
        visible_from="admission",
        admittime=fmt_datetime(adm.admittime),
    )
    return make_fact(category="history", slot="condition", value=evidence, evidence=evidence, source=source)


def test_a_planted_discharge_time_fact_of_the_invisible_note_is_dropped(demo_cohort):
    note, adm, day = _during_stay()
    memory = _memory(note, day)
    planted = [
        _planted(note=note, adm=adm, title=title)
        for title in ("Discharge Medications", "Brief Hospital Course", "Discharge Instructions", "Discharge Diagnosis")
        if find_section(note.text, title) is not None
    ]
    # Hospital course text passed off as HPI: the span is not in the section it claims.
    planted.append(_planted(note=note, adm=adm, title="Brief Hospital Course", claimed="History of Present Illness"))
    real = memory.of("symptom")[0]
    planted += [
        # A real HPI fact without the admission provenance: judged by the note's charttime.
        dataclasses.replace(real, id="x.none", source=dataclasses.replace(real.source, visible_from=None)),
        # Provenance naming another admission start.
        dataclasses.replace(real, id="x.time", source=dataclasses.replace(real.source, admittime="2000-01-01")),
        dataclasses.replace(real, id="x.why", source=dataclasses.replace(real.source, visible_from="discharge")),
        # The admission row only dates the rule; it is never a fact's source.
        make_fact(
            category="social",
            slot="living_situation",
            value=adm.admission_type,
            evidence=adm.admission_type,
            source=Source(kind="table", table="mimic_admissions", key={"hadm_id": adm.hadm_id}, field="admission_type"),
        ),
    ]
    assert len(planted) >= 7
    mixed = dataclasses.replace(memory, facts=[*memory.facts, *planted], dropped=[])
    checked = verify_memory(memory=mixed)
    assert checked.facts == memory.facts
    assert {d["fact"]["id"] for d in checked.dropped} == {f.id for f in planted}
    # The same HPI fact in a memory of another admission of the patient is not admission knowledge.
    other = dataclasses.replace(memory, hadm_id=-1, facts=[real], dropped=[])
    assert verify_memory(memory=other).facts == []


def test_before_the_admission_starts_none_of_its_note_is_known(demo_cohort):
    note, adm, _ = _during_stay()
    before = adm.admittime.date() - dt.timedelta(days=1)
    memory = _memory(note, before)
    assert _own(memory, note) == []
    assert not memory.of("symptom") and not memory.of("chief_complaint")
    assert all(f.source.visible_from is None for f in memory.facts)
    answer = answer_patient_tool(tool=SYMPTOM_TOOL, arguments={}, memory=memory, persona=_persona(), language="en")
    assert answer["facts"] == [] and answer["answer"] in _NOTHING["en"]
    # The verifier agrees: the admission-time facts of the stay are refused before it starts.
    during = _own(_memory(note, adm.admittime.date() + dt.timedelta(days=1)), note)
    assert during
    checked = verify_memory(memory=dataclasses.replace(memory, facts=during, dropped=[]))
    assert checked.facts == [] and all("not visible" in d["reason"] for d in checked.dropped)


def test_symptom_history_during_the_stay_is_no_longer_i_dont_know(demo_cohort):
    note, _, day = _during_stay()
    memory = _memory(note, day)
    for lang in ("en", "zh"):
        answer = answer_patient_tool(tool=SYMPTOM_TOOL, arguments={}, memory=memory, persona=_persona(), language=lang)
        assert answer["facts"] and answer["answer"] not in _NOTHING[lang]
        assert check_answer(answer=answer, memory=memory) == []
        assert all(memory.by_id(i).source.section in ADMISSION_SECTIONS for i in answer["facts"])


def test_the_ehr_tools_still_hide_the_note(demo_cohort):
    note, _, day = _during_stay()
    context = ToolContext(current_date=day, subject_id=note.subject_id, hadm_id=note.hadm_id)
    found = execute_tool(name="DocumentReference.search", arguments={"type_code": "discharge-summary"}, context=context)
    assert "warnings" not in found
    assert note.note_id not in json.dumps(found)


def test_admission_memory_json_round_trip_and_determinism(demo_cohort):
    note, _, day = _during_stay()
    memory = _memory(note, day)
    data = json.loads(json.dumps(memory.to_dict(), ensure_ascii=False))
    assert HealthMemory.from_dict(data) == memory
    assert data["facts"][0]["source"].get("visible_from") in ("admission", None)
    assert any(f["source"].get("visible_from") == "admission" for f in data["facts"])
    assert verify_memory(memory=HealthMemory.from_dict(data)).facts == memory.facts
    assert _memory(note, day).to_dict() == memory.to_dict()
    # Facts judged by their own time keep the JSON shape they had before the rule.
    charted = _memory(note, _charted_day(note)).to_dict()
    assert all("visible_from" not in f["source"] for f in charted["facts"])


SUBJECT, FIRST, SECOND = 95_000_101, 96_000_101, 96_000_102
EARLIER_NOTE = """Allergies:\nSulfa\n \nChief Complaint:\ncough\n \nHistory of Present Illness:\n\
Onset: three days ago.\n \nPast Medical History:\n- COPD\n \nSocial History:\nLives: lives alone.\n \n\
Brief Hospital Course:\nTreated for pneumonia.\n \nDischarge Medications:\n1. Tiotropium 18 mcg IH DAILY\n\
2. Furosemide 20 mg PO DAILY\n \nDischarge Condition:\nActivity Status: Ambulatory - Independent.\n"""
CURRENT_NOTE = """Allergies:\nNo Known Allergies / Adverse Drug Reactions\n \nChief Complaint:\nleg swelling\n \n\
History of Present Illness:\nOnset: one week ago.\nSeverity: moderate.\n \nPast Medical History:\n- COPD\n- CHF\n \n\
Social History:\nLives: lives with wife. Smoking: former.\n \nBrief Hospital Course:\nDiuresed with IV furosemide.\n \n\
Discharge Medications:\n1. Torsemide 40 mg PO DAILY\n \nDischarge Diagnosis:\nAcute on chronic heart failure\n \n\
Discharge Condition:\nActivity Status: Ambulatory - requires assistance or aid (walker or cane).\n"""


@pytest.fixture
def readmitted(db):
    m.Patient.objects.create(subject_id=SUBJECT, gender="F", anchor_age=80, anchor_year=2150)
    stays = [
        (FIRST, dt.datetime(2150, 1, 3, 9, 0, tzinfo=dt.UTC), dt.datetime(2150, 1, 8, tzinfo=dt.UTC), EARLIER_NOTE),
        (SECOND, dt.datetime(2150, 6, 1, 22, 30, tzinfo=dt.UTC), dt.datetime(2150, 6, 6, tzinfo=dt.UTC), CURRENT_NOTE),
    ]
    for seq, (hadm, admit, charted, text) in enumerate(stays, start=1):
        m.Admission.objects.create(
            subject_id=SUBJECT, hadm_id=hadm, admittime=admit, dischtime=charted, admission_type="EW EMER."
        )
        m.DischargeNote.objects.create(
            note_id=f"{SUBJECT}-DS-{seq}",
            subject_id=SUBJECT,
            hadm_id=hadm,
            note_type="DS",
            note_seq=seq,
            charttime=charted,
            text=text,
        )


def test_without_an_admission_list_the_last_discharge_list_is_the_home_list(readmitted):
    memory = build_memory(subject_id=SUBJECT, hadm_id=SECOND, current_date=dt.date(2150, 6, 2))
    assert memory.dropped == []
    own = [f for f in memory.facts if f.source.note_id == f"{SUBJECT}-DS-2"]
    assert [f.value for f in memory.of("chief_complaint")] == ["leg swelling"]
    assert {f.slot for f in memory.of("symptom")} == {"onset", "severity"}
    assert [f.value for f in memory.of("history")] == ["COPD", "CHF"]
    assert [f.source.note_id for f in memory.of("allergy")] == [f"{SUBJECT}-DS-2"]
    assert all(f.source.section in ADMISSION_SECTIONS and f.source.visible_from == "admission" for f in own)
    # Home medications: the earlier stay's discharge list (charted, so no admission provenance) —
    # never this stay's discharge list (torsemide), and nothing else of the earlier note.
    home = memory.of("medication", "home")
    assert [f.attrs["name"] for f in home] == ["Tiotropium", "Furosemide"]
    assert all(f.source.note_id == f"{SUBJECT}-DS-1" and f.source.visible_from is None for f in home)
    earlier = [f for f in memory.facts if f.source.note_id == f"{SUBJECT}-DS-1"]
    assert earlier == home
    assert "torsemide" not in json.dumps(memory.to_dict()).casefold()
    assert not memory.of("functional")  # both notes' function lines are discharge-time
    # The admission day itself (admitted 22:30) is not charted yet on that day: the story is not known then.
    before = build_memory(subject_id=SUBJECT, hadm_id=SECOND, current_date=dt.date(2150, 6, 1))
    assert not before.of("chief_complaint") and not before.of("symptom")
    assert {f.source.note_id for f in before.facts} == {f"{SUBJECT}-DS-1"}


def test_a_later_admissions_note_is_not_admission_knowledge_of_this_stay(demo_cohort):
    first, later = None, None
    for note in m.DischargeNote.objects.order_by("subject_id", "charttime"):
        if first is not None and first.subject_id == note.subject_id:
            later = note
            break
        first = note
    if later is None:
        pytest.skip("no readmission in the cohort")
    adm = m.Admission.objects.get(hadm_id=first.hadm_id)
    day = adm.admittime.date() + dt.timedelta(days=1)
    memory = _memory(first, day)
    later_adm = m.Admission.objects.get(hadm_id=later.hadm_id)
    told = _memory(later, later_adm.admittime.date() + dt.timedelta(days=1)).of("chief_complaint")[0]
    assert told.source.note_id == later.note_id
    # Provenance copied from this stay's start: the note still belongs to another admission.
    borrowed = dataclasses.replace(told, source=dataclasses.replace(told.source, admittime=fmt_datetime(adm.admittime)))
    checked = verify_memory(memory=dataclasses.replace(memory, facts=[*memory.facts, borrowed], dropped=[]))
    assert checked.facts == memory.facts and [d["fact"]["id"] for d in checked.dropped] == [borrowed.id]
