"""factory_boy factories for the MIMIC-IV models, and one hand-built patient record for tool tests.

Ids start at 90,000,000 so they never collide with the demo cohort loaded into the same test
database. Dictionary rows (d_labitems, d_items, d_icd_*) use get-or-create on their natural keys
because the demo cohort may already hold the same real MIMIC itemids/codes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import factory

from ehr import models as m
from ehr.fhir import ToolContext, execute_tool


def at(text: str) -> dt.datetime:
    """``'2180-07-19 06:00'`` → aware UTC datetime (MIMIC wall time is stored as UTC)."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


class PatientFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Patient

    subject_id = factory.Sequence(lambda n: 90_000_000 + n)
    gender = "F"
    anchor_age = 60
    anchor_year = 2178
    anchor_year_group = "2017 - 2019"
    dod = None


class AdmissionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Admission

    hadm_id = factory.Sequence(lambda n: 91_000_000 + n)
    subject_id = factory.LazyAttribute(lambda o: PatientFactory().subject_id)
    admittime = factory.LazyFunction(lambda: at("2180-07-18 08:00"))
    dischtime = factory.LazyAttribute(lambda o: o.admittime + dt.timedelta(days=5))
    admission_type = "EW EMER."
    admission_location = "EMERGENCY ROOM"
    discharge_location = "HOME"
    insurance = "Medicare"
    language = "ENGLISH"
    marital_status = "MARRIED"
    race = "WHITE"
    hospital_expire_flag = 0


class TransferFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Transfer

    transfer_id = factory.Sequence(lambda n: 92_000_000 + n)
    subject_id = 0
    hadm_id = None
    eventtype = "admit"
    careunit = "Medicine"
    intime = factory.LazyFunction(lambda: at("2180-07-18 08:00"))
    outtime = None


class ServiceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Service

    subject_id = 0
    hadm_id = 0
    transfertime = factory.LazyFunction(lambda: at("2180-07-18 08:00"))
    prev_service = None
    curr_service = "MED"


class DIcdDiagnosisFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.DIcdDiagnosis
        django_get_or_create = ("icd_code", "icd_version")

    icd_code = "I10"
    icd_version = 10
    long_title = "Essential (primary) hypertension"


class DiagnosisIcdFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.DiagnosisIcd

    subject_id = 0
    hadm_id = 0
    seq_num = 1
    icd_code = "I10"
    icd_version = 10


class DIcdProcedureFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.DIcdProcedure
        django_get_or_create = ("icd_code", "icd_version")

    icd_code = "5A1D70Z"
    icd_version = 10
    long_title = "Performance of Urinary Filtration, Intermittent, Less than 6 Hours Per Day"


class ProcedureIcdFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.ProcedureIcd

    subject_id = 0
    hadm_id = 0
    seq_num = 1
    chartdate = dt.date(2180, 7, 19)
    icd_code = "5A1D70Z"
    icd_version = 10


class DLabItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.DLabItem
        django_get_or_create = ("itemid",)

    itemid = 50912
    label = "Creatinine"
    fluid = "Blood"
    category = "Chemistry"


class LabEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.LabEvent

    labevent_id = factory.Sequence(lambda n: 93_000_000 + n)
    subject_id = 0
    hadm_id = None
    specimen_id = factory.Sequence(lambda n: 94_000_000 + n)
    itemid = 50912
    charttime = factory.LazyFunction(lambda: at("2180-07-19 06:00"))
    value = factory.LazyAttribute(lambda o: None if o.valuenum is None else f"{o.valuenum:g}")
    valuenum = 1.0
    valueuom = "mg/dL"
    ref_range_lower = 0.5
    ref_range_upper = 1.2
    flag = None
    priority = "ROUTINE"
    comments = None


class DItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.DItem
        django_get_or_create = ("itemid",)

    itemid = 220045
    label = "Heart Rate"
    abbreviation = "HR"
    linksto = "chartevents"
    category = "Routine Vital Signs"
    unitname = "bpm"
    param_type = "Numeric"


class ChartEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.ChartEvent

    subject_id = 0
    hadm_id = None
    stay_id = None
    charttime = factory.LazyFunction(lambda: at("2180-07-19 08:00"))
    itemid = 220045
    value = factory.LazyAttribute(lambda o: None if o.valuenum is None else f"{o.valuenum:g}")
    valuenum = 80.0
    valueuom = "bpm"
    warning = 0


class OmrFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Omr

    subject_id = 0
    chartdate = dt.date(2180, 1, 10)
    seq_num = 1
    result_name = "Blood Pressure"
    result_value = "130/85"


class MicrobiologyEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.MicrobiologyEvent

    microevent_id = factory.Sequence(lambda n: 95_000_000 + n)
    subject_id = 0
    hadm_id = None
    micro_specimen_id = 96_000_001
    chartdate = factory.LazyAttribute(lambda o: o.charttime.replace(hour=0, minute=0))
    charttime = factory.LazyFunction(lambda: at("2180-07-18 10:00"))
    spec_itemid = 70012
    spec_type_desc = "BLOOD CULTURE"
    test_seq = 1
    storedate = factory.LazyAttribute(lambda o: o.storetime.replace(hour=0, minute=0) if o.storetime else None)
    storetime = factory.LazyFunction(lambda: at("2180-07-20 12:00"))
    test_itemid = 90201
    test_name = "Blood Culture, Routine"
    org_itemid = 80002
    org_name = "ESCHERICHIA COLI"
    isolate_num = 1
    quantity = None
    ab_itemid = None
    ab_name = None
    dilution_text = None
    dilution_comparison = None
    dilution_value = None
    interpretation = None
    comments = None


class PrescriptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Prescription

    subject_id = 0
    hadm_id = 0
    pharmacy_id = factory.Sequence(lambda n: 97_000_000 + n)
    starttime = factory.LazyFunction(lambda: at("2180-07-18 12:00"))
    stoptime = factory.LazyAttribute(lambda o: o.starttime + dt.timedelta(days=3))
    drug_type = "MAIN"
    drug = "Warfarin"
    formulary_drug_cd = None
    ndc = None
    prod_strength = None
    form_rx = None
    dose_val_rx = "5"
    dose_unit_rx = "mg"
    doses_per_24_hrs = 1.0
    route = "PO"


class EmarFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Emar

    subject_id = 0
    hadm_id = None
    emar_id = factory.Sequence(lambda n: f"{90_000_000 + n}-1")
    emar_seq = factory.Sequence(lambda n: n + 1)
    pharmacy_id = None
    charttime = factory.LazyFunction(lambda: at("2180-07-19 21:00"))
    medication = "Warfarin"
    event_txt = "Administered"
    scheduletime = None


class DischargeNoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.DischargeNote

    note_id = factory.Sequence(lambda n: f"{90_000_000 + n}-DS-1")
    subject_id = 0
    hadm_id = None
    note_type = "DS"
    note_seq = 1
    charttime = factory.LazyFunction(lambda: at("2179-03-06 00:00"))
    text = ""


class RadiologyNoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.RadiologyNote

    note_id = factory.Sequence(lambda n: f"{90_000_000 + n}-RR-1")
    subject_id = 0
    hadm_id = None
    note_type = "RR"
    note_seq = 1
    charttime = factory.LazyFunction(lambda: at("2180-07-18 11:00"))
    text = ""


def _mimic_spacing(text: str) -> str:
    """MIMIC notes separate sections with lines holding a single space and end headings with a space."""
    return text.replace("\n\n", "\n \n").replace(":\n", ": \n")


PAST_DISCHARGE_NOTE = """\

Name:  ___                     Unit No:   ___

Admission Date:  ___              Discharge Date:   ___

Service: MEDICINE

Allergies:
Penicillins / Sulfa (Sulfonamide Antibiotics)

Attending: ___.

Chief Complaint:
Headache and high blood pressure

History of Present Illness:
Ms. ___ is a ___ woman with hypertension who presented with a headache.
VS: 98.1 182/100 88 18 97% RA

Past Medical History:
Hypertension

Social History:
Lives with her husband. Former smoker, quit ___ years ago. Drinks wine occasionally.

Medications on Admission:
1. Amlodipine 5 mg PO DAILY

Discharge Medications:
1. Amlodipine 10 mg PO DAILY
2. Metformin 500 mg PO BID

Discharge Disposition:
Home

Discharge Diagnosis:
Hypertensive urgency

Discharge Condition:
Mental Status: Clear and coherent.

Discharge Instructions:
You were admitted for very high blood pressure. We increased your amlodipine.

Followup Instructions:
- Primary care (Dr. ___) within 1 week
- Check blood pressure at home daily
"""

CURRENT_DISCHARGE_NOTE = """\
Allergies:
Codeine

Chief Complaint:
Shortness of breath

Discharge Instructions:
Stop lisinopril. Take warfarin as directed.

Followup Instructions:
Anticoagulation clinic on ___
"""

CHEST_XRAY = """\
EXAMINATION:  CHEST (PA AND LAT)

INDICATION:  ___ with dyspnea

FINDINGS:

Mild pulmonary vascular congestion. No focal consolidation.

IMPRESSION:

Mild pulmonary vascular congestion.
"""

HEAD_CT = """\
EXAMINATION:  CT HEAD W/O CONTRAST

FINDINGS:

No hemorrhage.

IMPRESSION:

No acute intracranial process.
"""


@dataclass(frozen=True)
class Record:
    """Ids of the hand-built record; ``current_date`` is the session date the tests use."""

    subject_id: int
    past_hadm: int
    current_hadm: int
    future_hadm: int
    current_date: dt.date = dt.date(2180, 7, 21)


def build_record() -> Record:
    """One patient: a past admission (2179), the current one (admitted 2180-07-18, discharged
    2180-07-24, i.e. after the session date 2180-07-21) and a future one (2180-09-01), with
    rows on both sides of the cutoff (00:00 of the session date 2180-07-21: the last visible
    day is 2180-07-20) in every table."""
    p = PatientFactory(gender="F", anchor_age=60, anchor_year=2178, dod=dt.date(2181, 1, 5))
    s = p.subject_id
    past = AdmissionFactory(subject_id=s, admittime=at("2179-03-01 10:00"), dischtime=at("2179-03-06 12:00"))
    cur = AdmissionFactory(
        subject_id=s, admittime=at("2180-07-18 08:00"), dischtime=at("2180-07-24 14:00"), marital_status="WIDOWED"
    )
    fut = AdmissionFactory(subject_id=s, admittime=at("2180-09-01 09:00"), dischtime=at("2180-09-04 09:00"))
    rec = Record(subject_id=s, past_hadm=past.hadm_id, current_hadm=cur.hadm_id, future_hadm=fut.hadm_id)

    TransferFactory(
        subject_id=s,
        hadm_id=cur.hadm_id,
        eventtype="ED",
        careunit="Emergency Department",
        intime=at("2180-07-18 08:00"),
        outtime=at("2180-07-18 12:00"),
    )
    TransferFactory(
        subject_id=s,
        hadm_id=cur.hadm_id,
        eventtype="admit",
        careunit="Medicine",
        intime=at("2180-07-18 12:00"),
        outtime=at("2180-07-22 10:00"),
    )
    TransferFactory(
        subject_id=s,
        hadm_id=cur.hadm_id,
        eventtype="transfer",
        careunit="Medical Intensive Care Unit (MICU)",
        intime=at("2180-07-22 10:00"),
        outtime=at("2180-07-24 14:00"),
    )
    ServiceFactory(subject_id=s, hadm_id=cur.hadm_id, transfertime=at("2180-07-18 08:00"), curr_service="MED")
    ServiceFactory(subject_id=s, hadm_id=cur.hadm_id, transfertime=at("2180-07-22 10:00"), curr_service="CMED")

    for itemid, label, fluid in [
        (50912, "Creatinine", "Blood"),
        (50971, "Potassium", "Blood"),
        (51082, "Creatinine, Urine", "Urine"),
        (51003, "Troponin T", "Blood"),
    ]:
        DLabItemFactory(itemid=itemid, label=label, fluid=fluid)
    lab = {"subject_id": s, "hadm_id": cur.hadm_id}
    LabEventFactory(**lab, charttime=at("2180-07-18 09:00"), valuenum=1.1)
    LabEventFactory(**lab, charttime=at("2180-07-19 06:00"), valuenum=1.6, flag="abnormal")
    LabEventFactory(**lab, charttime=at("2180-07-20 23:30"), valuenum=2.0, flag="abnormal")
    LabEventFactory(**lab, charttime=at("2180-07-21 06:00"), valuenum=2.4, flag="abnormal")  # on the session date
    LabEventFactory(
        **lab,
        itemid=50971,
        charttime=at("2180-07-19 06:00"),
        valuenum=5.9,
        valueuom="mEq/L",
        ref_range_lower=3.3,
        ref_range_upper=5.1,
        flag="abnormal",
    )
    LabEventFactory(
        **lab, itemid=51082, charttime=at("2180-07-19 07:00"), valuenum=80.0, ref_range_lower=None, ref_range_upper=None
    )
    LabEventFactory(
        **lab,
        itemid=51003,
        charttime=at("2180-07-18 09:00"),
        valuenum=None,
        value="<0.01",
        valueuom="ng/mL",
        ref_range_lower=None,
        ref_range_upper=0.01,
    )
    LabEventFactory(subject_id=s, hadm_id=past.hadm_id, charttime=at("2179-03-02 06:00"), valuenum=0.9)
    LabEventFactory(subject_id=s, hadm_id=None, charttime=at("2180-01-10 10:00"), valuenum=1.0)  # outpatient
    LabEventFactory(subject_id=s, hadm_id=fut.hadm_id, charttime=at("2180-09-01 10:00"), valuenum=3.0)

    DItemFactory(itemid=220045, label="Heart Rate", unitname="bpm")
    DItemFactory(itemid=220179, label="Non Invasive Blood Pressure systolic", abbreviation="NBPs", unitname="mmHg")
    chart = {"subject_id": s, "hadm_id": cur.hadm_id}
    ChartEventFactory(**chart, itemid=220045, charttime=at("2180-07-19 08:00"), valuenum=110.0)
    ChartEventFactory(**chart, itemid=220045, charttime=at("2180-07-21 08:00"), valuenum=90.0)  # on the session date
    ChartEventFactory(**chart, itemid=220179, charttime=at("2180-07-19 08:00"), valuenum=95.0, valueuom="mmHg")
    OmrFactory(
        subject_id=s, chartdate=dt.date(2180, 1, 10), seq_num=1, result_name="Blood Pressure", result_value="130/85"
    )
    OmrFactory(subject_id=s, chartdate=dt.date(2180, 1, 10), seq_num=1, result_name="Weight (Lbs)", result_value="180")
    OmrFactory(subject_id=s, chartdate=dt.date(2180, 8, 1), seq_num=1, result_name="Weight (Lbs)", result_value="175")

    micro = {"subject_id": s, "hadm_id": cur.hadm_id}
    for ab, dil, interp in [("CEFTRIAXONE", "<=1", "S"), ("CIPROFLOXACIN", ">=4", "R")]:
        MicrobiologyEventFactory(
            **micro,
            micro_specimen_id=96_000_001,
            ab_name=ab,
            ab_itemid=90000 + len(ab),
            dilution_text=dil,
            interpretation=interp,
        )
    MicrobiologyEventFactory(
        **micro,
        micro_specimen_id=96_000_002,
        spec_itemid=70079,
        spec_type_desc="URINE",
        test_itemid=90039,
        test_name="URINE CULTURE",
        charttime=at("2180-07-20 09:00"),
        storetime=at("2180-07-22 08:00"),
        org_name="ENTEROCOCCUS SP.",
        org_itemid=80053,
    )
    MicrobiologyEventFactory(
        **micro, micro_specimen_id=96_000_003, charttime=at("2180-07-22 09:00"), storetime=at("2180-07-23 09:00")
    )

    rx = {"subject_id": s, "hadm_id": cur.hadm_id}
    warfarin = PrescriptionFactory(
        **rx, drug="Warfarin", starttime=at("2180-07-18 12:00"), stoptime=at("2180-07-25 12:00")
    )
    lisinopril = PrescriptionFactory(
        **rx, drug="Lisinopril", dose_val_rx="10", starttime=at("2180-07-18 12:00"), stoptime=at("2180-07-19 09:00")
    )
    PrescriptionFactory(
        **rx,
        drug="Vancomycin",
        dose_val_rx="1000",
        route="IV",
        doses_per_24_hrs=2,
        starttime=at("2180-07-21 10:00"),
        stoptime=at("2180-07-23 10:00"),
    )
    PrescriptionFactory(
        subject_id=s,
        hadm_id=past.hadm_id,
        drug="Metformin",
        dose_val_rx="500",
        starttime=at("2179-03-02 08:00"),
        stoptime=at("2179-03-06 12:00"),
    )
    EmarFactory(
        subject_id=s,
        hadm_id=cur.hadm_id,
        pharmacy_id=warfarin.pharmacy_id,
        medication="Warfarin",
        charttime=at("2180-07-19 21:00"),
        event_txt="Administered",
    )
    EmarFactory(
        subject_id=s,
        hadm_id=cur.hadm_id,
        pharmacy_id=lisinopril.pharmacy_id,
        medication="Lisinopril",
        charttime=at("2180-07-19 09:00"),
        event_txt="Not Given",
    )
    EmarFactory(
        subject_id=s,
        hadm_id=cur.hadm_id,
        pharmacy_id=warfarin.pharmacy_id,
        medication="Warfarin",
        charttime=at("2180-07-21 21:00"),
        event_txt="Administered",
    )

    for code, version, title in [
        ("4019", 9, "Unspecified essential hypertension"),
        ("N179", 10, "Acute kidney failure, unspecified"),
        ("I4891", 10, "Unspecified atrial fibrillation"),
        ("J189", 10, "Pneumonia, unspecified organism"),
    ]:
        DIcdDiagnosisFactory(icd_code=code, icd_version=version, long_title=title)
    DiagnosisIcdFactory(subject_id=s, hadm_id=past.hadm_id, seq_num=1, icd_code="4019", icd_version=9)
    DiagnosisIcdFactory(subject_id=s, hadm_id=cur.hadm_id, seq_num=1, icd_code="N179", icd_version=10)
    DiagnosisIcdFactory(subject_id=s, hadm_id=cur.hadm_id, seq_num=2, icd_code="I4891", icd_version=10)
    DiagnosisIcdFactory(subject_id=s, hadm_id=fut.hadm_id, seq_num=1, icd_code="J189", icd_version=10)

    DIcdProcedureFactory(
        icd_code="5A1D70Z",
        icd_version=10,
        long_title="Performance of Urinary Filtration, Intermittent, Less than 6 Hours Per Day",
    )
    DIcdProcedureFactory(icd_code="3995", icd_version=9, long_title="Hemodialysis")
    DIcdProcedureFactory(
        icd_code="0BH17EZ",
        icd_version=10,
        long_title="Insertion of Endotracheal Airway into Trachea, Via Natural or Artificial Opening",
    )
    ProcedureIcdFactory(
        subject_id=s, hadm_id=past.hadm_id, seq_num=1, chartdate=dt.date(2179, 3, 3), icd_code="3995", icd_version=9
    )
    ProcedureIcdFactory(subject_id=s, hadm_id=cur.hadm_id, seq_num=1, chartdate=dt.date(2180, 7, 20))
    ProcedureIcdFactory(
        subject_id=s, hadm_id=cur.hadm_id, seq_num=2, chartdate=dt.date(2180, 7, 22), icd_code="0BH17EZ"
    )

    DischargeNoteFactory(
        subject_id=s, hadm_id=past.hadm_id, charttime=at("2179-03-06 00:00"), text=_mimic_spacing(PAST_DISCHARGE_NOTE)
    )
    DischargeNoteFactory(
        subject_id=s, hadm_id=cur.hadm_id, charttime=at("2180-07-24 00:00"), text=_mimic_spacing(CURRENT_DISCHARGE_NOTE)
    )
    RadiologyNoteFactory(
        subject_id=s, hadm_id=cur.hadm_id, charttime=at("2180-07-18 11:00"), text=_mimic_spacing(CHEST_XRAY)
    )
    RadiologyNoteFactory(
        subject_id=s, hadm_id=cur.hadm_id, charttime=at("2180-07-22 15:00"), text=_mimic_spacing(HEAD_CT)
    )
    return rec


def call_tool(
    rec: Record, name: str, current_date: dt.date | None = None, *, bounds: str = "strict", **arguments: Any
) -> dict[str, Any]:
    """Run one tool for ``rec``'s patient (contract names), as of ``current_date`` (default: the record's)."""
    context = ToolContext(current_date=current_date or rec.current_date, bounds=bounds)
    return execute_tool(name=name, arguments={"subject_id": rec.subject_id, **arguments}, context=context)
