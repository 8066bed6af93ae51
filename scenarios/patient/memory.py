"""Build the patient health memory for (subject_id, hadm_id, current_date) from the EHR tables.

Only records visible at ``current_date`` are read (the cutoff rule of ``ehr.fhir.context``):

* the session admission's discharge note, once charted: chief complaint, HPI (symptoms, adherence,
  drugs mentioned, pain score), medications on admission;
* the newest visible discharge note of the patient (the admission's own, else an earlier one):
  past history, allergies, social history, functional status — and, when the admission's own
  note is not visible yet, the medications the patient went home with last time;
* inpatient prescriptions of the admission started before the cutoff;
* charted pain levels of the admission (first and latest visible).

Admission-time rule (the one exception, patient memory only — the EHR tools keep hiding the note):
MIMIC discharge notes are charted at discharge, yet a patient knows what they told the admitting
team. So once the session admission's ``admittime`` is visible but its own discharge note is not
charted yet, that note is read for its admission-time sections only — Chief Complaint, History of
Present Illness, Past Medical History, Allergies, Social History, Family History, Medications on
Admission (``verify.ADMISSION_SECTIONS``), with the adherence, functional and pain facts found in
them — and never for the hospital course, results, discharge medications, diagnosis, condition or
instructions. Each such source carries ``visible_from="admission"`` and the ``admittime``; the note
then also stands in for the background note (it is the newest account of history, allergies and
social facts). Only if it has no admission medication list does an earlier visible note supply the
medications the patient went home with last time.

Every fact is then re-checked against its source by :func:`scenarios.patient.verify.verify_memory`.
"""

from __future__ import annotations

import datetime as dt

from ehr import models as m
from ehr.fhir.context import ToolContext, fmt_datetime
from scenarios.patient.extract import admission_facts_from_note, facts_from_note
from scenarios.patient.facts import CATEGORIES, Fact, HealthMemory, Source, make_fact
from scenarios.patient.text import DEID
from scenarios.patient.verify import RecordReader, verify_memory

PAIN_LABELS = ("Pain Level",)
_PAIN_ITEMIDS_FALLBACK = (223791,)
MAX_INPATIENT = 25


def session_admission(*, subject_id: int, hadm_id: int | None, current_date: dt.date) -> int | None:
    """``hadm_id`` if given, else the patient's latest admission started by the current date."""
    if hadm_id is not None:
        return hadm_id
    context = ToolContext(current_date=current_date, subject_id=subject_id)
    adm = (
        m.Admission.objects.filter(subject_id=subject_id, admittime__lt=context.cutoff)
        .order_by("-admittime", "-hadm_id")
        .first()
    )
    return adm.hadm_id if adm else None


def _note_facts(*, subject_id: int, hadm_id: int | None, context: ToolContext) -> list[Fact]:
    notes = list(
        m.DischargeNote.objects.filter(subject_id=subject_id, charttime__lt=context.cutoff).order_by(
            "-charttime", "-note_seq", "note_id"
        )
    )
    own = next((n for n in notes if hadm_id is not None and n.hadm_id == hadm_id), None)
    background = own or (notes[0] if notes else None)
    if own is None and hadm_id is not None:
        at_admission = _admission_time_facts(subject_id=subject_id, hadm_id=hadm_id, context=context)
        if at_admission:
            if background is None or any(f.category == "medication" and f.slot == "home" for f in at_admission):
                return at_admission
            # No admission list: the list the patient went home with last time, nothing else of that note.
            earlier = facts_from_note(
                note_id=background.note_id,
                text=background.text,
                charttime=fmt_datetime(background.charttime),
                current=False,
                background=True,
                home_title="Discharge Medications",
            )
            return at_admission + [f for f in earlier if f.category == "medication" and f.slot == "home"]
    facts: list[Fact] = []
    for note in [n for n in (own, background) if n is not None][: 1 if own is background else 2]:
        facts += facts_from_note(
            note_id=note.note_id,
            text=note.text,
            charttime=fmt_datetime(note.charttime),
            current=note is own,
            background=note is background,
            home_title="Medications on Admission" if note is own else "Discharge Medications",
        )
    return facts


def _admission_time_facts(*, subject_id: int, hadm_id: int, context: ToolContext) -> list[Fact]:
    """Admission-time facts of the admission's own, not yet charted, discharge note (see module doc)."""
    admission = m.Admission.objects.filter(subject_id=subject_id, hadm_id=hadm_id, admittime__lt=context.cutoff).first()
    if admission is None:
        return []
    # Why the first: an addendum (higher note_seq) repeats the admission story; one account is enough.
    note = (
        m.DischargeNote.objects.filter(subject_id=subject_id, hadm_id=hadm_id, charttime__gte=context.cutoff)
        .order_by("charttime", "note_seq", "note_id")
        .first()
    )
    if note is None:
        return []
    return admission_facts_from_note(
        note_id=note.note_id,
        text=note.text,
        charttime=fmt_datetime(note.charttime),
        admittime=fmt_datetime(admission.admittime),
    )


def _prescription_facts(*, hadm_id: int, context: ToolContext) -> list[Fact]:
    rows = m.Prescription.objects.filter(hadm_id=hadm_id, starttime__lt=context.cutoff).order_by(
        "-starttime", "pharmacy_id", "pk"
    )
    facts: list[Fact] = []
    seen: set[str] = set()
    for row in rows:
        name = (row.drug or "").strip()
        if not name or DEID in name or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        columns = {
            k: v
            for k, v in {
                "dose_val_rx": row.dose_val_rx,
                "dose_unit_rx": row.dose_unit_rx,
                "route": row.route,
                "starttime": fmt_datetime(row.starttime),
            }.items()
            if v is not None and DEID not in str(v)
        }
        source = Source(
            kind="table",
            table="mimic_prescriptions",
            key={"hadm_id": row.hadm_id, "pharmacy_id": row.pharmacy_id},
            field="drug",
            charttime=fmt_datetime(row.starttime),
        )
        facts.append(
            make_fact(
                category="medication",
                slot="inpatient",
                value=name,
                evidence=row.drug,
                source=source,
                attrs={"columns": columns, "name": name},
            )
        )
        if len(facts) >= MAX_INPATIENT:
            break
    return facts


def _pain_facts(*, hadm_id: int, context: ToolContext) -> list[Fact]:
    itemids = list(m.DItem.objects.filter(label__in=PAIN_LABELS).values_list("itemid", flat=True))
    rows = list(
        m.ChartEvent.objects.filter(
            hadm_id=hadm_id, itemid__in=itemids or _PAIN_ITEMIDS_FALLBACK, charttime__lt=context.cutoff
        )
        .exclude(value__isnull=True)
        .order_by("charttime", "itemid", "pk")  # total: equal chart times keep one order
    )
    rows = [r for r in rows if r.value.strip() and DEID not in r.value]
    picks = [("charted_first", rows[0]), ("charted_latest", rows[-1])] if len(rows) > 1 else []
    picks = picks or [("charted_latest", r) for r in rows[-1:]]
    facts = []
    for slot, row in picks:
        when = fmt_datetime(row.charttime)
        source = Source(
            kind="table",
            table="mimic_chartevents",
            key={"hadm_id": row.hadm_id, "itemid": row.itemid, "charttime": row.charttime.isoformat()},
            field="value",
            charttime=when,
        )
        facts.append(
            make_fact(
                category="pain",
                slot=slot,
                value=row.value.strip(),
                evidence=row.value,
                source=source,
                attrs={"charttime": when},
            )
        )
    return facts


def build_memory(
    *, subject_id: int, hadm_id: int | None, current_date: dt.date, reader: RecordReader | None = None
) -> HealthMemory:
    """The verified memory; facts the verifier cannot trace are in ``dropped``, never in ``facts``."""
    context = ToolContext(current_date=current_date, subject_id=subject_id, hadm_id=hadm_id)
    hadm_id = session_admission(subject_id=subject_id, hadm_id=hadm_id, current_date=current_date)
    facts = _note_facts(subject_id=subject_id, hadm_id=hadm_id, context=context)
    if hadm_id is not None:
        facts += _prescription_facts(hadm_id=hadm_id, context=context)
        facts += _pain_facts(hadm_id=hadm_id, context=context)
    facts.sort(key=lambda f: CATEGORIES.index(f.category))  # stable: record order within a category
    memory = HealthMemory(
        subject_id=subject_id, hadm_id=hadm_id, current_date=current_date.isoformat(), facts=facts, dropped=[]
    )
    return verify_memory(memory=memory, reader=reader)
