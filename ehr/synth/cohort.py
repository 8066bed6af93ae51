"""Generate a whole cohort and write it in the MIMIC-IV layout.

Each patient has its own ``random.Random`` seeded from (seed, patient index): patients are
independent of each other, and adding patients never changes the earlier ones.
"""

import random
from collections.abc import Callable
from pathlib import Path

from ehr.synth import encounters, labs, meds, micro, notes, vitals
from ehr.synth.catalog import CHART_ITEMS, LAB_ITEMS
from ehr.synth.drugs import DRUGS
from ehr.synth.icd import diagnosis_title, procedure_title
from ehr.synth.plan import Patient, plan_patient
from ehr.synth.sink import HADM_BASE, SUBJECT_BASE, Sink


def _discharge_meds(*, home: list[str], add: list[str], stop: list[str]) -> list[str]:
    """Home list after discharge: stops removed, additions appended; a new anticoagulant replaces the old one."""
    new_anticoagulants = [d for d in add if DRUGS[d].klass == "anticoagulant"]
    after = [
        m
        for m in home
        if m not in stop and not (new_anticoagulants and DRUGS[m].klass == "anticoagulant" and m not in add)
    ]
    for drug in add:
        if drug not in after:
            after.append(drug)
    return after


def _simulate_patient(*, sink: Sink, rng: random.Random, patient: Patient, dx: dict, px: dict) -> None:
    base = labs.baseline(rng=rng, patient=patient)
    encounters.patient_row(sink=sink, patient=patient)
    note_seq = 1
    rad_seq = 1
    for n, adm in enumerate(patient.admissions):
        home_before = list(patient.home_meds)
        encounters.admission_rows(sink=sink, rng=rng, patient=patient, adm=adm)
        for code in encounters.diagnosis_rows(sink=sink, patient=patient, adm=adm):
            dx[code] = None
        procedures = encounters.procedure_rows(sink=sink, rng=rng, patient=patient, adm=adm)
        for code in procedures:
            px[code] = None
        notes.choose_hpi(rng=rng, adm=adm)
        adm.facts["organism"] = micro.choose_organism(rng=rng, adm=adm)
        labs.prepare(rng=rng, patient=patient, adm=adm, base=base)
        meds.prescriptions(sink=sink, rng=rng, patient=patient, adm=adm)
        labs.inpatient_labs(sink=sink, rng=rng, patient=patient, adm=adm)
        labs.outpatient_labs(sink=sink, rng=rng, patient=patient, adm=adm)
        micro.cultures(
            sink=sink,
            rng=rng,
            patient=patient,
            adm=adm,
            organism=adm.facts["organism"],
            outpatient=n == 0 and rng.random() < 0.4,
        )
        vitals.chart(sink=sink, rng=rng, patient=patient, adm=adm)
        rad_seq = notes.radiology_notes(sink=sink, rng=rng, patient=patient, adm=adm, first_seq=rad_seq)
        home_after = _discharge_meds(home=home_before, add=adm.facts["discharge_add"], stop=adm.facts["discharge_stop"])
        titles = [procedure_title(code=c, version=v) for c, v in procedures]
        notes.discharge_note(
            sink=sink,
            rng=rng,
            patient=patient,
            adm=adm,
            seq=note_seq,
            home_before=home_before,
            home_after=home_after,
            procedures=titles,
        )
        note_seq += 1
        # Antibiotic courses and steroid tapers end before the next admission; chronic drugs carry over.
        patient.home_meds = [m for m in home_after if DRUGS[m].klass not in ("antibiotic", "steroid")]
        anticoagulant = next((m for m in patient.home_meds if DRUGS[m].klass == "anticoagulant"), None)
        if anticoagulant != patient.anticoagulant:
            patient.anticoagulant = anticoagulant
            base["inr"] = rng.uniform(2.1, 2.8) if anticoagulant == "warfarin" else rng.uniform(0.95, 1.1)
    vitals.omr(sink=sink, rng=rng, patient=patient)


def generate_cohort(
    *, patients: int, seed: int, out_dir: Path, on_patient: Callable[[], None] | None = None
) -> dict[str, int]:
    """Simulate ``patients`` patients and write every table under ``out_dir``; return row counts by table."""
    if patients < 1:
        raise ValueError("patients must be at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    sink = Sink(out_dir=out_dir)
    try:
        return _generate(sink=sink, patients=patients, seed=seed, on_patient=on_patient)
    except BaseException:
        sink.abort()
        raise


def _generate(*, sink: Sink, patients: int, seed: int, on_patient: Callable[[], None] | None) -> dict[str, int]:
    dx: dict[tuple[str, int], None] = {}
    px: dict[tuple[str, int], None] = {}
    next_hadm = HADM_BASE + 1
    for index in range(patients):
        # A string seed is hashed with SHA-512 by random.Random: stable across runs and platforms.
        rng = random.Random(f"physreview-synth:{seed}:{index}")
        patient = plan_patient(rng=rng, index=index, subject_id=SUBJECT_BASE + 17 * (index + 1), next_hadm=next_hadm)
        next_hadm += len(patient.admissions)
        _simulate_patient(sink=sink, rng=rng, patient=patient, dx=dx, px=px)
        sink.flush()
        if on_patient is not None:
            on_patient()
    for lab in sorted(LAB_ITEMS.values(), key=lambda i: i.itemid):
        sink.add("d_labitems", itemid=lab.itemid, label=lab.label, fluid=lab.fluid, category=lab.category)
    for item in sorted(CHART_ITEMS.values(), key=lambda i: i.itemid):
        sink.add(
            "d_items",
            itemid=item.itemid,
            label=item.label,
            abbreviation=item.abbreviation,
            linksto="chartevents",
            category=item.category,
            unitname=item.unit,
            param_type="Text" if item is CHART_ITEMS["pain"] else "Numeric",
            lownormalvalue=None if item.low is None else float(item.low),
            highnormalvalue=None if item.high is None else float(item.high),
        )
    for code, version in sorted(dx, key=lambda cv: (cv[1], cv[0])):
        sink.add(
            "d_icd_diagnoses",
            icd_code=code,
            icd_version=version,
            long_title=diagnosis_title(code=code, version=version),
        )
    for code, version in sorted(px, key=lambda cv: (cv[1], cv[0])):
        sink.add(
            "d_icd_procedures",
            icd_code=code,
            icd_version=version,
            long_title=procedure_title(code=code, version=version),
        )
    return sink.commit()
