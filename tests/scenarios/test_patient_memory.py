"""Patient health memory against the demo cohort: HPI fields, traceability, cutoff, JSON round trip."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from ehr import models as m
from ehr.fhir.context import visibility_cutoff
from scenarios.patient import HealthMemory, Source, build_memory, verify_memory
from scenarios.patient.facts import SYMPTOM_SLOTS, make_fact
from scenarios.patient.verify import ADMISSION_SECTIONS


def _note_day(note: m.DischargeNote) -> dt.date:
    """The first current date that shows the note: visible iff charted before 00:00 of the current date."""
    return note.charttime.date() + dt.timedelta(days=1)


def _memory_at_discharge(note: m.DischargeNote) -> HealthMemory:
    return build_memory(subject_id=note.subject_id, hadm_id=note.hadm_id, current_date=_note_day(note))


def _first_note() -> m.DischargeNote:
    note = m.DischargeNote.objects.order_by("subject_id", "charttime").first()
    if note is None:
        pytest.skip("no discharge notes")
    return note


def test_memory_fields_filled_from_the_hpi(demo_cohort):
    note = _first_note()
    memory = _memory_at_discharge(note)
    assert memory.dropped == []
    for slot in SYMPTOM_SLOTS:
        facts = memory.of("symptom", slot)
        assert facts, f"no {slot} fact"
        assert all(f.source.section == "History of Present Illness" for f in facts)
    assert memory.of("chief_complaint")
    assert memory.of("history")
    assert memory.of("medication", "home")
    assert memory.of("allergy")
    assert {f.slot for f in memory.of("social")} >= {"smoking", "alcohol", "living_situation"}
    assert memory.of("functional")
    assert memory.of("pain")
    # The HPI line "Onset: ..." is quoted exactly, without its label.
    onset = memory.of("symptom", "onset")[0]
    assert f"Onset: {onset.evidence}" in note.text
    # Home medications are parsed into parts, each written as in the note.
    med = memory.of("medication", "home")[0]
    assert {"name", "dose", "unit"} <= set(med.attrs)
    assert all(str(v) in med.evidence for v in med.attrs.values())


def test_every_fact_is_traceable_on_every_demo_admission(demo_cohort):
    notes = list(m.DischargeNote.objects.order_by("note_id"))
    assert notes
    total = 0
    for note in notes:
        memory = _memory_at_discharge(note)
        assert memory.dropped == [], (note.note_id, memory.dropped[:1])
        assert verify_memory(memory=memory).facts == memory.facts
        for fact in memory.facts:
            total += 1
            assert "___" not in fact.value and "___" not in fact.evidence
            if fact.source.kind == "note":
                text = m.DischargeNote.objects.get(note_id=fact.source.note_id).text
                assert text[fact.source.start : fact.source.end] == fact.evidence
    assert total > 20 * len(notes)


def _planted(memory: HealthMemory, *, evidence: str, source: Source, value: str | None = None):
    return make_fact(category="adherence", slot="drug", value=value or evidence, evidence=evidence, source=source)


def test_a_planted_untraceable_fact_is_dropped(demo_cohort):
    note = _first_note()
    memory = _memory_at_discharge(note)
    real = memory.of("symptom", "onset")[0]
    invented = "stopped taking digoxin last week"
    wrong_span = _planted(memory, evidence=invented, source=real.source)
    missing_note = _planted(
        memory, evidence=real.evidence, source=dataclasses.replace(real.source, key={"note_id": "X"})
    )
    moved = _planted(
        memory,
        evidence=real.evidence,
        source=dataclasses.replace(real.source, start=real.source.start + 1, end=real.source.end + 1),
    )
    deid = _planted(memory, evidence="___", source=real.source)
    paraphrase = _planted(memory, evidence=real.evidence, value="it began last year", source=real.source)
    fake_row = make_fact(
        category="medication",
        slot="inpatient",
        value="Digoxin",
        evidence="Digoxin",
        source=Source(kind="table", table="mimic_prescriptions", key={"hadm_id": note.hadm_id, "pharmacy_id": -1}),
    )
    planted = [wrong_span, missing_note, moved, deid, paraphrase, fake_row]
    mixed = dataclasses.replace(memory, facts=[*memory.facts, *planted], dropped=[])
    checked = verify_memory(memory=mixed)
    assert checked.facts == memory.facts
    assert {d["fact"]["id"] for d in checked.dropped} == {f.id for f in planted}
    assert all(d["reason"] for d in checked.dropped)


def test_a_note_charted_after_the_current_date_gives_its_admission_time_sections_only(demo_cohort):
    note = _first_note()
    adm = m.Admission.objects.get(hadm_id=note.hadm_id)
    day_before = _note_day(note) - dt.timedelta(days=1)
    assert day_before >= adm.admittime.date()
    memory = build_memory(subject_id=note.subject_id, hadm_id=note.hadm_id, current_date=day_before)
    assert memory.dropped == []
    # The patient knows what they told the admitting team (admission-time rule of memory.py) ...
    assert memory.of("symptom") and memory.of("chief_complaint")
    own = [f for f in memory.facts if f.source.note_id == note.note_id]
    assert own and all(f.source.section in ADMISSION_SECTIONS for f in own)
    cutoff = visibility_cutoff(day_before)
    for fact in memory.facts:
        assert fact.source.charttime is not None
        if fact.source.visible_from == "admission":  # ... from the admission's start, before the note is charted
            assert dt.datetime.fromisoformat(fact.source.admittime).replace(tzinfo=dt.UTC) < cutoff
        else:
            assert dt.datetime.fromisoformat(fact.source.charttime).replace(tzinfo=dt.UTC) < cutoff
    # Inpatient orders started by then are known; those started later are not.
    later = m.Prescription.objects.filter(hadm_id=note.hadm_id, starttime__gte=cutoff).values_list("drug", flat=True)
    earlier = m.Prescription.objects.filter(hadm_id=note.hadm_id, starttime__lt=cutoff).values_list("drug", flat=True)
    said = {f.value for f in memory.of("medication", "inpatient")}
    assert said == set(earlier)
    assert not (set(later) - set(earlier)) & said


def test_a_later_admission_reads_chronic_facts_from_the_earlier_note(demo_cohort):
    for adm in m.Admission.objects.order_by("subject_id", "admittime"):
        day_before = adm.admittime.date() - dt.timedelta(days=1)
        earlier = m.DischargeNote.objects.filter(
            subject_id=adm.subject_id, charttime__lt=visibility_cutoff(day_before)
        ).first()
        if earlier is not None:
            break
    else:
        pytest.skip("no readmission in the cohort")
    # The day before the admission starts its own story is not known yet; the earlier note is.
    memory = build_memory(subject_id=adm.subject_id, hadm_id=adm.hadm_id, current_date=day_before)
    assert memory.dropped == []
    home = memory.of("medication", "home")
    assert home and all(f.source.section == "Discharge Medications" for f in home)
    assert {f.source.note_id for f in memory.facts if f.source.kind == "note"} <= set(
        m.DischargeNote.objects.filter(subject_id=adm.subject_id, charttime__lt=adm.admittime).values_list(
            "note_id", flat=True
        )
    )
    assert not memory.of("symptom")  # the old admission's symptoms are not today's


def test_memory_json_round_trip(demo_cohort):
    memory = _memory_at_discharge(_first_note())
    data = json.loads(json.dumps(memory.to_dict(), ensure_ascii=False))
    assert HealthMemory.from_dict(data) == memory
    assert HealthMemory.from_dict(data).to_dict() == memory.to_dict()


def test_memory_is_deterministic(demo_cohort):
    note = _first_note()
    assert _memory_at_discharge(note).to_dict() == _memory_at_discharge(note).to_dict()


def test_without_hadm_id_the_latest_admission_started_by_then_is_used(demo_cohort):
    note = _first_note()
    memory = build_memory(subject_id=note.subject_id, hadm_id=None, current_date=_note_day(note))
    latest = (
        m.Admission.objects.filter(subject_id=note.subject_id, admittime__lt=visibility_cutoff(_note_day(note)))
        .order_by("-admittime")
        .first()
    )
    assert memory.hadm_id == latest.hadm_id
    assert memory.facts and memory.dropped == []
