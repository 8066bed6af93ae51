"""Read queries behind the patient browser (the raw record, not the FHIR tool view)."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime

from django.db.models import Count, Max, Min, Q
from django.http import Http404

from core.cache_generations import generation
from ehr.fhir.codes import VITAL_ITEMIDS
from ehr.fhir.context import visibility_cutoff
from ehr.fhir.notes import Section, split_sections
from ehr.models import (
    Admission,
    ChartEvent,
    DiagnosisIcd,
    DIcdDiagnosis,
    DischargeNote,
    DItem,
    DLabItem,
    LabEvent,
    MicrobiologyEvent,
    Patient,
    Prescription,
    RadiologyNote,
)

# Screens that cache what they read of a record (the review screens' evidence and admission header) put this
# database generation in their keys; an import moves it (importer.table_import), in every process (issue 36).
EHR_GENERATION = "ehr-record"


def record_generation() -> int:
    return generation(EHR_GENERATION)


@dataclass
class PatientRow:
    patient: Patient
    admissions: list[Admission] = field(default_factory=list)


def patient_rows(*, query: str = "", limit: int = 200) -> list[PatientRow]:
    """Patients with their admissions, two queries whatever the number of patients."""
    patients = Patient.objects.order_by("subject_id")
    if query.isdigit():
        patients = patients.filter(
            Q(subject_id=int(query))
            | Q(subject_id__in=Admission.objects.filter(hadm_id=int(query)).values("subject_id"))
        )
    elif query:
        subjects = DiagnosisIcd.objects.filter(
            icd_code__in=DIcdDiagnosis.objects.filter(long_title__icontains=query).values("icd_code")
        ).values("subject_id")
        patients = patients.filter(subject_id__in=subjects)
    rows = {p.subject_id: PatientRow(patient=p) for p in patients[:limit]}
    for adm in Admission.objects.filter(subject_id__in=rows).order_by("admittime"):
        rows[adm.subject_id].admissions.append(adm)
    return list(rows.values())


def cohort_counts() -> dict[str, int]:
    return {
        "patients": Patient.objects.count(),
        "admissions": Admission.objects.count(),
        "lab_events": LabEvent.objects.count(),
    }


@dataclass
class LabSeries:
    itemid: int
    label: str
    fluid: str
    unit: str
    points: list[LabEvent]

    @property
    def latest(self) -> LabEvent:
        return self.points[-1]

    @property
    def abnormal(self) -> bool:
        return any(p.flag for p in self.points)


@dataclass
class VitalSeries:
    label: str
    unit: str
    points: list[ChartEvent]

    @property
    def latest(self) -> ChartEvent:
        return self.points[-1]


@dataclass
class NoteSections:
    kind: str  # "discharge" | "radiology"
    note_id: str
    charttime: datetime
    sections: list[Section]


def vital_series(*, hadm_id: int, before: datetime) -> list[VitalSeries]:
    """The admission's routine vital signs per item (the FHIR tools' vital-sign item ids), oldest first."""
    events = list(
        ChartEvent.objects.filter(hadm_id=hadm_id, itemid__in=VITAL_ITEMIDS, charttime__lt=before)
        .only("itemid", "charttime", "value", "valuenum", "valueuom")
        .order_by("charttime")
    )
    labels = dict(DItem.objects.filter(itemid__in={e.itemid for e in events}).values_list("itemid", "label"))
    grouped: dict[int, list[ChartEvent]] = defaultdict(list)
    for event in events:
        grouped[event.itemid].append(event)
    series = [
        VitalSeries(
            label=labels.get(itemid) or f"item {itemid}",
            unit=next((p.valueuom for p in points if p.valueuom), ""),
            points=points,
        )
        for itemid, points in grouped.items()
    ]
    return sorted(series, key=lambda s: s.label)


def note_sections(*, hadm_id: int, before: datetime) -> list[NoteSections]:
    """The admission's notes written before ``before`` (notes are visible from their charttime), in sections."""
    notes = []
    for kind, model in (("discharge", DischargeNote), ("radiology", RadiologyNote)):
        for note in model.objects.filter(hadm_id=hadm_id, charttime__lt=before).order_by("charttime", "note_seq"):
            notes.append(NoteSections(kind, note.note_id, note.charttime, split_sections(note.text, kind=kind)))
    return sorted(notes, key=lambda n: n.charttime)


def diagnoses_with_titles(*, hadm_id: int) -> list[dict]:
    rows = list(DiagnosisIcd.objects.filter(hadm_id=hadm_id).order_by("seq_num"))
    titles = {
        (d.icd_code, d.icd_version): d.long_title
        for d in DIcdDiagnosis.objects.filter(icd_code__in=[r.icd_code for r in rows])
    }
    return [
        {"row": r, "title": titles.get((r.icd_code, r.icd_version), "(title not in d_icd_diagnoses)")} for r in rows
    ]


# The columns the review screen's lab table and sparklines read (the rest stay in the database).
LAB_SUMMARY_FIELDS = ("labevent_id", "itemid", "charttime", "value", "valuenum", "valueuom", "flag")
MED_SUMMARY_FIELDS = ("id", "drug", "dose_val_rx", "dose_unit_rx", "route", "starttime")


def lab_series(
    *, hadm_id: int, before: datetime | None = None, fields: tuple[str, ...] | None = None
) -> list[LabSeries]:
    """The admission's labs grouped per test (abnormal first); ``before`` bounds them (a session's cutoff).

    ``fields``: load only these LabEvent columns (others are fetched on access).
    """
    events = LabEvent.objects.filter(hadm_id=hadm_id).order_by("charttime")
    if before is not None:
        events = events.filter(charttime__lt=before)
    if fields is not None:
        events = events.only(*fields)
    events = list(events)
    items = {i.itemid: i for i in DLabItem.objects.filter(itemid__in={e.itemid for e in events})}
    grouped: dict[int, list[LabEvent]] = defaultdict(list)
    for event in events:
        grouped[event.itemid].append(event)
    series = []
    for itemid, points in grouped.items():
        item = items.get(itemid)
        series.append(
            LabSeries(
                itemid=itemid,
                label=item.label if item and item.label else f"item {itemid}",
                fluid=(item.fluid or "") if item else "",
                unit=next((p.valueuom for p in points if p.valueuom), ""),
                points=points,
            )
        )
    return sorted(series, key=lambda s: (not s.abnormal, s.label))


def admission_overview(*, hadm_id: int) -> dict:
    """Everything the admission page shows, in a fixed number of queries."""
    try:
        admission = Admission.objects.get(hadm_id=hadm_id)
    except Admission.DoesNotExist as exc:
        raise Http404(f"No admission {hadm_id}") from exc
    patient = Patient.objects.filter(subject_id=admission.subject_id).first()
    other_admissions = Admission.objects.filter(subject_id=admission.subject_id).exclude(hadm_id=hadm_id)
    span = LabEvent.objects.filter(hadm_id=hadm_id).aggregate(first=Min("charttime"), last=Max("charttime"))
    return {
        "admission": admission,
        "patient": patient,
        "age_at_admission": _age_at(patient, admission.admittime) if patient else None,
        "other_admissions": other_admissions.order_by("admittime"),
        "diagnoses": diagnoses_with_titles(hadm_id=hadm_id),
        "labs": lab_series(hadm_id=hadm_id),
        "lab_span": span,
        "prescriptions": Prescription.objects.filter(hadm_id=hadm_id).order_by("starttime", "drug"),
        "micro": MicrobiologyEvent.objects.filter(hadm_id=hadm_id).order_by("chartdate", "test_seq", "ab_name"),
        "micro_count": MicrobiologyEvent.objects.filter(hadm_id=hadm_id)
        .values("micro_specimen_id")
        .aggregate(n=Count("micro_specimen_id", distinct=True))["n"],
        "discharge_notes": DischargeNote.objects.filter(hadm_id=hadm_id).order_by("charttime"),
        "radiology_notes": RadiologyNote.objects.filter(hadm_id=hadm_id).order_by("charttime"),
    }


def _age_at(patient: Patient, when: datetime) -> int:
    return patient.anchor_age + (when.year - patient.anchor_year)


def admission_header(*, subject_id: int, hadm_id: int) -> dict:
    """The patient and admission rows a session's header shows."""
    return {
        "admission": Admission.objects.filter(hadm_id=hadm_id).first(),
        "patient": Patient.objects.filter(subject_id=subject_id).first(),
    }


def admission_evidence(*, hadm_id: int, current_date: date) -> dict:
    """What a reviewer checks a turn against: the admission's record as of a session's current date.

    Bounded by the same cutoff rule as the EHR tools, in a fixed number of queries.
    """
    cutoff = visibility_cutoff(current_date)
    return {
        "labs": lab_series(hadm_id=hadm_id, before=cutoff, fields=LAB_SUMMARY_FIELDS),
        "meds": list(
            Prescription.objects.filter(hadm_id=hadm_id)
            .filter(Q(starttime__lt=cutoff) | Q(starttime__isnull=True))
            .only(*MED_SUMMARY_FIELDS)
            .order_by("starttime", "drug")
        ),
        "diagnoses": diagnoses_with_titles(hadm_id=hadm_id),
        "vitals": vital_series(hadm_id=hadm_id, before=cutoff),
        "micro": list(
            MicrobiologyEvent.objects.filter(hadm_id=hadm_id)
            .filter(Q(charttime__lt=cutoff) | Q(charttime__isnull=True, chartdate__lt=cutoff))
            .order_by("chartdate", "charttime", "microevent_id")
        ),
        "notes": note_sections(hadm_id=hadm_id, before=cutoff),
    }
