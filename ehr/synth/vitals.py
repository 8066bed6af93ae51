"""chartevents (vital signs, fingerstick glucose, weight) and omr (outpatient weight, BMI, BP).

Admission vitals start in the disease's abnormal range and settle to the patient's normal values
over about two days. Real MIMIC charts vitals only during ICU stays; this cohort also charts ward
vitals (with an empty ``stay_id``) so every admission has vital signs for the tools to find.
"""

import datetime as dt
import random

from ehr.synth import labs
from ehr.synth.catalog import CHART_ITEMS
from ehr.synth.diseases import DISEASES
from ehr.synth.plan import Admission, Patient
from ehr.synth.sink import Sink

RECOVERY_PER_DAY = 0.55


def _normal(*, patient: Patient) -> dict[str, float]:
    htn = "htn" in patient.conditions
    return {
        "hr": 74.0,
        "sbp": 134.0 if htn else 122.0,
        "dbp": 78.0 if htn else 72.0,
        "rr": 16.0,
        "spo2": 93.0 if "copd" in patient.conditions else 97.0,
        "temp": 36.8,
    }


def _pain_text(*, score: int) -> str:
    return "None" if score == 0 else "Mild" if score <= 3 else "Moderate" if score <= 6 else "Severe"


def chart(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission) -> None:
    disease = DISEASES[adm.disease]
    normal = _normal(patient=patient)
    start = {k: rng.uniform(*disease.vitals[k]) if k in disease.vitals else v for k, v in normal.items()}
    caregiver = rng.randint(10000, 99999)
    # Pain at admission follows the HPI severity ("7/10" etc.) and eases with treatment.
    pain0 = int(adm.facts.get("pain_score", 4))
    when = adm.admittime + dt.timedelta(minutes=5)
    recovery = 0.05 if adm.died else RECOVERY_PER_DAY
    first: dict[str, float] = {}
    step = 0
    diabetic = "t1dm" in patient.conditions or "t2dm" in patient.conditions or adm.disease == "copd"
    while when < adm.dischtime:
        in_icu = adm.icu_in is not None and adm.icu_in <= when <= adm.icu_out
        day = (when - adm.admittime).total_seconds() / 86400
        stay = adm.stay_id if in_icu else None
        current: dict[str, float] = {}
        for key in ("hr", "sbp", "dbp", "rr", "spo2", "temp"):
            value = normal[key] + (start[key] - normal[key]) * (1 - recovery) ** day
            value += rng.gauss(0, 0.4 if key == "temp" else 1.5)
            if key == "spo2":
                value = min(value, 100.0)
            current[key] = value
            _row(
                sink=sink,
                patient=patient,
                adm=adm,
                stay=stay,
                caregiver=caregiver,
                when=when,
                key=key,
                value=value,
                rng=rng,
            )
        if first and current["spo2"] < 93:
            # Supplemental oxygen after the first (room-air) reading whenever saturation is low.
            flow = 2.0 if current["spo2"] >= 90 else 4.0
            _row(
                sink=sink,
                patient=patient,
                adm=adm,
                stay=stay,
                caregiver=caregiver,
                when=when,
                key="o2flow",
                value=flow,
                rng=rng,
            )
        if not first:
            first = {k: round(v, 1) for k, v in current.items()}
        mean = (current["sbp"] + 2 * current["dbp"]) / 3
        _row(
            sink=sink,
            patient=patient,
            adm=adm,
            stay=stay,
            caregiver=caregiver,
            when=when,
            key="mbp",
            value=mean,
            rng=rng,
        )
        if step % 2 == 0:
            pain = max(0, round(pain0 * (1 - RECOVERY_PER_DAY) ** day))
            _row(
                sink=sink,
                patient=patient,
                adm=adm,
                stay=stay,
                caregiver=caregiver,
                when=when,
                key="pain",
                value=None,
                text=_pain_text(score=pain),
                rng=rng,
            )
        if step == 0:
            for key, value in (("weight", patient.weight), ("height", patient.height)):
                _row(
                    sink=sink,
                    patient=patient,
                    adm=adm,
                    stay=stay,
                    caregiver=caregiver,
                    when=when,
                    key=key,
                    value=value,
                    rng=rng,
                )
        step += 1
        when += dt.timedelta(hours=2 if in_icu else 6, minutes=rng.randint(-20, 20))
    adm.facts["admit_vitals"] = first
    if diabetic:
        _fingersticks(sink=sink, rng=rng, patient=patient, adm=adm, caregiver=caregiver)


def _fingersticks(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission, caregiver: int) -> None:
    day = adm.admittime.date()
    while day <= adm.dischtime.date():
        for hour in (7, 11, 16, 21):
            when = dt.datetime.combine(day, dt.time(hour, rng.randint(0, 40)))
            if adm.admittime < when < adm.dischtime:
                days = (when - adm.admittime).total_seconds() / 86400
                glucose = labs.value_on(adm=adm, key="glucose", day=days) * rng.uniform(0.85, 1.2)
                in_icu = adm.icu_in is not None and adm.icu_in <= when <= adm.icu_out
                _row(
                    sink=sink,
                    patient=patient,
                    adm=adm,
                    stay=adm.stay_id if in_icu else None,
                    caregiver=caregiver,
                    when=when,
                    key="fingerstick",
                    value=glucose,
                    rng=rng,
                )
        day += dt.timedelta(days=1)


def _row(
    *,
    sink: Sink,
    patient: Patient,
    adm: Admission,
    stay: int | None,
    caregiver: int,
    when: dt.datetime,
    key: str,
    value: float | None,
    rng: random.Random,
    text: str | None = None,
) -> None:
    item = CHART_ITEMS[key]
    if value is not None:
        value = round(value, item.decimals) if item.decimals else float(round(value))
        text = f"{value:.{item.decimals}f}" if item.decimals else str(int(value))
    warning = 0
    if value is not None and item.low is not None and item.high is not None and not item.low <= value <= item.high:
        warning = 1
    sink.add(
        "chartevents",
        subject_id=patient.subject_id,
        hadm_id=adm.hadm_id,
        stay_id=stay,
        caregiver_id=caregiver,
        charttime=when,
        storetime=when + dt.timedelta(minutes=rng.randint(1, 30)),
        itemid=item.itemid,
        value=text,
        valuenum=value,
        valueuom=item.unit,
        warning=warning,
    )


def omr(*, sink: Sink, rng: random.Random, patient: Patient) -> None:
    """Clinic measurements: one visit before each admission and one after discharge."""
    height_m = patient.height / 100
    for adm in patient.admissions:
        visits = [(adm.admittime - dt.timedelta(days=rng.randint(20, 50))).date()]
        if not adm.died:
            visits.append((adm.dischtime + dt.timedelta(days=rng.randint(10, 30))).date())
        for visit in visits:
            weight_kg = patient.weight + rng.uniform(-2, 2)
            sbp = rng.randint(118, 150) if "htn" in patient.conditions else rng.randint(105, 132)
            dbp = rng.randint(65, 88)
            for seq, (name, value) in enumerate(
                (
                    ("Blood Pressure", f"{sbp}/{dbp}"),
                    ("Weight (Lbs)", f"{weight_kg * 2.20462:.1f}"),
                    ("BMI (kg/m2)", f"{weight_kg / height_m**2:.1f}"),
                    ("Height (Inches)", f"{patient.height / 2.54:.0f}"),
                ),
                start=1,
            ):
                sink.add(
                    "omr",
                    subject_id=patient.subject_id,
                    chartdate=visit,
                    seq_num=seq,
                    result_name=name,
                    result_value=value,
                )
