"""labevents: admission and daily panels following each disease's lab trajectory, plus outpatient draws.

Values come from one function of (patient baseline, disease effect, hospital day), so the same
number shows up in labevents, in the discharge note's Pertinent Results and in the tests.
"""

import dataclasses
import datetime as dt
import math
import random

from ehr.synth.catalog import LAB_ITEMS, PANELS
from ehr.synth.conditions import CONDITIONS
from ehr.synth.diseases import DISEASES, Effect
from ehr.synth.plan import Admission, Patient
from ehr.synth.sink import Sink

# Healthy adult centre values; a patient's baseline jitters around these.
NORMAL: dict[str, float] = {
    "creatinine": 0.9,
    "potassium": 4.2,
    "sodium": 139,
    "chloride": 103,
    "bicarbonate": 25,
    "bun": 15,
    "glucose": 98,
    "magnesium": 2.0,
    "calcium": 9.2,
    "albumin": 4.0,
    "bilirubin": 0.6,
    "crp": 3.0,
    "hba1c": 5.5,
    "troponin_t": 0.0,
    "ntprobnp": 150,
    "vancomycin": 0.0,
    "lactate": 1.2,
    "wbc": 7.5,
    "hemoglobin": 13.5,
    "hematocrit": 40.5,
    "platelets": 240,
    "inr": 1.0,
    "pt": 11.0,
    "ptt": 30.0,
    "anion_gap": 11.0,
}
NOISE = 0.03  # relative day-to-day analytic + biological variation
# Tightly regulated analytes vary much less (sodium CV is about 1%).
TIGHT = {"sodium": 0.008, "chloride": 0.012, "calcium": 0.015, "bicarbonate": 0.025}
# Secondary labs that may come back as a de-identified "___" result; never the benchmark's key labs.
DEIDENTIFIABLE = ("ptt", "magnesium", "chloride")


def baseline(*, rng: random.Random, patient: Patient) -> dict[str, float]:
    """The patient's steady-state values: normal values shifted by chronic conditions and home drugs."""
    base = {k: v * (1 + rng.uniform(-2, 2) * TIGHT.get(k, 0.035)) for k, v in NORMAL.items()}
    for cond in patient.conditions:
        for key, value in CONDITIONS[cond].baseline.items():
            base[key] = value * rng.uniform(0.92, 1.08)
    if patient.anticoagulant == "warfarin":
        base["inr"] = rng.uniform(2.1, 2.8)
    if patient.gender == "M":
        base["hemoglobin"] += 1.2
    base["hematocrit"] = base["hemoglobin"] * 3
    base["pt"] = 11.0 * base["inr"]
    return base


def _trajectory(*, effect: Effect, base: float, start: float, day: float) -> float:
    if effect.kind == "recover":
        return base + (start - base) * (1 - effect.rate) ** day
    if effect.kind == "rise":
        return start + ((effect.target or base) - start) * (1 - math.exp(-effect.rate * day))
    # peak: linear climb to the peak day, then recovery toward baseline
    if day <= effect.peak_day:
        return base + (start - base) * (day + 1) / (effect.peak_day + 1)
    return base + (start - base) * (1 - effect.rate) ** (day - effect.peak_day)


def value_on(*, adm: Admission, key: str, day: float) -> float:
    """True (noise-free) value of lab ``key`` on hospital ``day`` of ``adm`` (needs ``adm.facts`` set)."""
    if key == "anion_gap":  # derived, so that the gap always matches the electrolytes printed beside it
        return (
            value_on(adm=adm, key="sodium", day=day)
            - value_on(adm=adm, key="chloride", day=day)
            - value_on(adm=adm, key="bicarbonate", day=day)
        )
    if key == "pt":
        return 11.0 * value_on(adm=adm, key="inr", day=day)
    base = adm.facts["baseline"][key]
    effects = adm.facts["effects"]
    if key not in effects:
        return base
    return _trajectory(effect=effects[key], base=base, start=adm.facts["starts"][key], day=day)


def prepare(*, rng: random.Random, patient: Patient, adm: Admission, base: dict[str, float]) -> None:
    """Fix this admission's lab trajectories (effects, starting values) before any event is written."""
    disease = DISEASES[adm.disease]
    effects = dict(disease.effects)
    if adm.disease == "afib_rvr" and patient.anticoagulant == "apixaban":
        effects.pop("inr")  # no warfarin loading, so no INR climb
    if adm.disease == "afib_rvr" and patient.anticoagulant == "warfarin":
        pass  # missed warfarin doses: subtherapeutic INR rising back on reloading
    if adm.died:  # a fatal course does not recover: abnormal values persist to the end
        effects = {k: dataclasses.replace(e, rate=e.rate * 0.1) for k, e in effects.items()}
    adm.facts["baseline"] = dict(base)
    adm.facts["effects"] = effects
    adm.facts["starts"] = {k: rng.uniform(e.lo, e.hi) for k, e in effects.items()}


def _render(*, key: str, value: float, rng: random.Random, adm: Admission) -> tuple[str, float | None]:
    """Printed value and valuenum; qualitative and censored results have no valuenum, as in MIMIC."""
    item = LAB_ITEMS[key]
    if key == "troponin_t" and value < 0.01:
        return "<0.01", None
    if key == "urine_glucose":
        # Renal threshold for glucose is ~180 mg/dL; ``value`` is the blood glucose of the day.
        if value < 180:
            return "NEG", None
        return (">1000", None) if value > 400 else ("300", 300.0)
    if key == "urine_ketone":
        return ("150", 150.0) if adm.disease == "dka" else ("NEG", None)
    if key in ("urine_leukocytes", "urine_nitrite", "urine_wbc"):
        infected = adm.disease == "pyelo"
        if key == "urine_leukocytes":
            return ("LG", None) if infected else ("NEG", None)
        if key == "urine_nitrite":
            return ("POS", None) if infected else ("NEG", None)
        if infected:
            return ">182", None
        cells = rng.randint(0, 4)
        return str(cells), float(cells)
    rounded = round(value, item.decimals)
    if item.decimals == 0:
        rounded = float(int(rounded))
        text = str(int(rounded))
    else:
        text = f"{rounded:.{item.decimals}f}"
    return text, rounded


def _panel_keys(*, names: tuple[str, ...]) -> list[str]:
    keys: list[str] = []
    for name in names:
        for key in PANELS.get(name, (name,)):
            if key not in keys:
                keys.append(key)
    return keys


def _draw(
    *,
    sink: Sink,
    rng: random.Random,
    patient: Patient,
    adm: Admission,
    hadm_id: int | None,
    keys: list[str],
    when: dt.datetime,
    values: dict[str, float],
    priority: str,
) -> dict[str, float]:
    specimen = sink.next_id("specimen", 1_000_000)
    provider = f"P{rng.randint(10000, 99999)}"
    stored = when + dt.timedelta(minutes=rng.randint(35, 150))
    drawn: dict[str, float] = {}
    for key in keys:
        item = LAB_ITEMS[key]
        true = values.get("glucose", 0.0) if key == "urine_glucose" else values.get(key, 0.0)
        # Drug levels scatter in absolute terms (assay + dose timing), analytes relative to their value.
        sd = TIGHT.get(key, NOISE)
        noisy = true + rng.gauss(0, 0.8) if key == "vancomycin" else true * (1 + rng.gauss(0, sd))
        text, num = _render(key=key, value=max(noisy, 0.0), rng=rng, adm=adm)
        comments = None
        if key in DEIDENTIFIABLE and rng.random() < 0.03:
            # Real files carry de-identified free-text results: "___" with no number.
            text, num, comments = "___", None, "___"
        flag = None
        if num is not None and (
            (item.low is not None and num < item.low) or (item.high is not None and num > item.high)
        ):
            flag = "abnormal"
        if text in ("LG", "POS", ">182", ">1000", "150", "300"):
            flag = "abnormal"
        if key == "vancomycin":
            comments = "TROUGH LEVEL"
        sink.add(
            "labevents",
            labevent_id=sink.next_id("labevent", 1),
            subject_id=patient.subject_id,
            hadm_id=hadm_id,
            specimen_id=specimen,
            itemid=item.itemid,
            order_provider_id=provider,
            charttime=when,
            storetime=stored,
            value=text,
            valuenum=num,
            valueuom=item.unit,
            ref_range_lower=None if item.low is None else float(item.low),
            ref_range_upper=None if item.high is None else float(item.high),
            flag=flag,
            priority=priority,
            comments=comments,
        )
        if num is not None:
            drawn[key] = num
    return drawn


def _day_time(*, adm: Admission, day: int, rng: random.Random) -> dt.datetime | None:
    """Morning draw time of hospital ``day``, or None if outside the admission."""
    when = dt.datetime.combine(adm.admittime.date() + dt.timedelta(days=day), dt.time(5, rng.randint(0, 59)))
    return when if adm.admittime < when < adm.dischtime else None


def inpatient_labs(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission) -> None:
    disease = DISEASES[adm.disease]
    daily = _panel_keys(names=("bmp", "cbc", *disease.extra_labs))
    if patient.anticoagulant == "warfarin" and "inr" not in daily:
        daily += _panel_keys(names=("coag",))
    # Admission chemistry also carries calcium, albumin and bilirubin, as an ED draw usually does.
    admit_keys = _panel_keys(
        names=("bmp", "cbc", "calcium", "albumin", "bilirubin", *disease.extra_labs, *disease.admit_labs)
    )
    on_vanc = adm.facts.get("vanc_days", set())
    results: dict[int, dict[str, float]] = {}
    times: dict[int, dt.datetime] = {}
    when = adm.admittime + dt.timedelta(minutes=rng.randint(10, 45))
    values = {k: value_on(adm=adm, key=k, day=0) for k in admit_keys if k in NORMAL}
    keys = [k for k in admit_keys if k != "vancomycin"]
    times[0] = when
    results[0] = _draw(
        sink=sink,
        rng=rng,
        patient=patient,
        adm=adm,
        hadm_id=adm.hadm_id,
        keys=keys,
        when=when,
        values=values,
        priority="STAT",
    )
    for day in range(1, adm.days + 1):
        when = _day_time(adm=adm, day=day, rng=rng)
        if when is None:
            continue
        keys = [k for k in daily if k != "vancomycin" or day in on_vanc]
        values = {k: value_on(adm=adm, key=k, day=day) for k in keys if k in NORMAL}
        times[day] = when
        results[day] = _draw(
            sink=sink,
            rng=rng,
            patient=patient,
            adm=adm,
            hadm_id=adm.hadm_id,
            keys=keys,
            when=when,
            values=values,
            priority="ROUTINE",
        )
    adm.facts["lab_results"] = results
    adm.facts["lab_times"] = times


def outpatient_labs(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission) -> None:
    """Clinic draws around an admission: no hadm_id, values at the patient's baseline."""
    keys = _panel_keys(names=("bmp", "cbc"))
    if patient.anticoagulant == "warfarin" or "warfarin" in DISEASES[adm.disease].discharge_add:
        keys += _panel_keys(names=("coag",))
    base = adm.facts["baseline"]
    before = adm.admittime - dt.timedelta(days=rng.randint(12, 45), hours=rng.randint(0, 5))
    before = before.replace(hour=rng.randint(8, 11))
    _draw(
        sink=sink,
        rng=rng,
        patient=patient,
        adm=adm,
        hadm_id=None,
        keys=keys,
        when=before,
        values=base,
        priority="ROUTINE",
    )
    if not adm.died:
        after = (adm.dischtime + dt.timedelta(days=rng.randint(3, 8))).replace(hour=rng.randint(8, 11))
        values = {k: value_on(adm=adm, key=k, day=adm.days + 3) for k in keys if k in NORMAL}
        _draw(
            sink=sink,
            rng=rng,
            patient=patient,
            adm=adm,
            hadm_id=None,
            keys=keys,
            when=after,
            values=values,
            priority="ROUTINE",
        )
