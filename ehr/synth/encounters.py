"""patients, admissions, transfers, services, icustays, diagnoses_icd and procedures_icd rows.

Transfers tell the same story as the admission: ED → admitting unit (ICU if the plan says so) →
ward → discharge, with contiguous in/out times; the ICU transfer matches the icustays row.
"""

import datetime as dt
import random

from ehr.synth.conditions import CONDITIONS
from ehr.synth.diseases import DISEASES, SUPERSEDES
from ehr.synth.plan import Admission, Patient
from ehr.synth.sink import Sink

ICU_UNITS = {"CMED": "Coronary Care Unit (CCU)", "MED": "Medical Intensive Care Unit (MICU)"}


def patient_row(*, sink: Sink, patient: Patient) -> None:
    # MIMIC caps ages above 89 at 91 to protect the oldest patients.
    sink.add(
        "patients",
        subject_id=patient.subject_id,
        gender=patient.gender,
        anchor_age=min(patient.anchor_age, 91),
        anchor_year=patient.anchor_year,
        anchor_year_group=patient.anchor_year_group,
        dod=patient.dod,
    )


def admission_rows(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission) -> None:
    disease = DISEASES[adm.disease]
    if adm.died:
        discharge_location = "DIED"
    elif adm.age >= 80 and rng.random() < 0.5:
        discharge_location = "SKILLED NURSING FACILITY"
    else:
        discharge_location = rng.choice(("HOME", "HOME", "HOME HEALTH CARE"))
    adm.facts["discharge_location"] = discharge_location
    sink.add(
        "admissions",
        subject_id=patient.subject_id,
        hadm_id=adm.hadm_id,
        admittime=adm.admittime,
        dischtime=adm.dischtime,
        deathtime=adm.dischtime if adm.died else None,
        admission_type="EW EMER." if rng.random() < 0.8 else "URGENT",
        admit_provider_id=f"P{rng.randint(10000, 99999)}",
        admission_location="EMERGENCY ROOM",
        discharge_location=discharge_location,
        insurance=patient.insurance,
        language="ENGLISH",
        marital_status=patient.marital,
        race=patient.race,
        edregtime=adm.edregtime,
        edouttime=adm.edouttime,
        hospital_expire_flag=1 if adm.died else 0,
    )
    ward = disease.careunit
    legs: list[tuple[str, str, dt.datetime, dt.datetime | None]] = [
        ("ED", "Emergency Department", adm.edregtime, adm.edouttime)
    ]
    if adm.icu_in is not None and adm.icu_out is not None:
        icu_unit = ICU_UNITS[disease.service]
        legs.append(("admit", icu_unit, adm.icu_in, adm.icu_out))
        legs.append(("transfer", ward, adm.icu_out, adm.dischtime))
        adm.stay_id = sink.next_id("stay", 30_000_000)
        # The ICU stay starts when the patient reaches the unit, shortly after the admission order.
        sink.add(
            "icustays",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            stay_id=adm.stay_id,
            first_careunit=icu_unit,
            last_careunit=icu_unit,
            intime=adm.icu_in,
            outtime=adm.icu_out,
            los=round((adm.icu_out - adm.icu_in).total_seconds() / 86400, 4),
        )
    else:
        legs.append(("admit", ward, adm.edouttime, adm.dischtime))
    legs.append(("discharge", "", adm.dischtime, None))
    for eventtype, unit, intime, outtime in legs:
        sink.add(
            "transfers",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            transfer_id=sink.next_id("transfer", 30_000_000 + 5_000_000),
            eventtype=eventtype,
            careunit=unit or None,
            intime=intime,
            outtime=outtime,
        )
    sink.add(
        "services",
        subject_id=patient.subject_id,
        hadm_id=adm.hadm_id,
        transfertime=adm.admittime,
        prev_service=None,
        curr_service=disease.service,
    )


def coded_diagnoses(*, patient: Patient, adm: Admission) -> list[tuple[str, int]]:
    """(icd_code, version) in sequence order: principal, its companions, then chronic conditions."""
    disease = DISEASES[adm.disease]
    v = adm.icd_version
    pick = 1 if v == 9 else 0
    codes = [(disease.icd10, disease.icd9)[pick]]
    codes += [pair[pick] for pair in disease.secondary]
    skip = SUPERSEDES.get(adm.disease, ())
    codes += [(CONDITIONS[c].icd10, CONDITIONS[c].icd9)[pick] for c in patient.conditions if c not in skip]
    unique: list[tuple[str, int]] = []
    for code in codes:
        if (code, v) not in unique:
            unique.append((code, v))
    return unique


def diagnosis_rows(*, sink: Sink, patient: Patient, adm: Admission) -> list[tuple[str, int]]:
    codes = coded_diagnoses(patient=patient, adm=adm)
    for seq, (code, version) in enumerate(codes, start=1):
        sink.add(
            "diagnoses_icd",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            seq_num=seq,
            icd_code=code,
            icd_version=version,
        )
    return codes


def procedure_rows(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission) -> list[tuple[str, int]]:
    disease = DISEASES[adm.disease]
    codes: list[tuple[str, int]] = []
    for seq, pair in enumerate(disease.procedures, start=1):
        code = pair[0] if adm.icd_version == 10 else pair[1]
        day = min(rng.randint(0, 1) + seq - 1, adm.days)
        sink.add(
            "procedures_icd",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            seq_num=seq,
            chartdate=adm.admittime.date() + dt.timedelta(days=day),
            icd_code=code,
            icd_version=adm.icd_version,
        )
        codes.append((code, adm.icd_version))
    return codes
