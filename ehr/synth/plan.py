"""Plan one synthetic patient: demographics, chronic conditions, home medications and admissions.

Everything downstream (rows of every table, notes) is derived from this plan, so a patient's
story is decided once and told consistently everywhere. All randomness comes from the
``random.Random`` passed in; nothing depends on set or dict iteration order or on the clock.
"""

import datetime as dt
import random
from dataclasses import dataclass, field

from ehr.synth.conditions import BACKGROUND, CONDITIONS, EXCLUSIVE
from ehr.synth.diseases import DISEASES, READMISSION

# MIMIC-IV de-identification: each patient gets an anchor year in the future (here 2110-2185)
# standing for a real 3-year window; admissions are shifted by the same offset.
YEAR_GROUPS = (2008, 2011, 2014, 2017, 2020)
ICD10_START = dt.date(2015, 10, 1)  # US switch from ICD-9-CM to ICD-10-CM

FIRST_NAMES_F = ("Mary", "Linda", "Susan", "Karen", "Helen", "Rosa", "Mei", "Grace")
FIRST_NAMES_M = ("James", "Robert", "John", "David", "Carlos", "Wei", "Joseph", "Thomas")


@dataclass
class Admission:
    hadm_id: int
    disease: str
    admittime: dt.datetime
    dischtime: dt.datetime
    icd_version: int
    age: int
    edregtime: dt.datetime
    edouttime: dt.datetime  # the patient leaves the ED for the ward/ICU shortly after the admit order
    icu_in: dt.datetime | None = None
    icu_out: dt.datetime | None = None
    stay_id: int | None = None
    died: bool = False
    # Filled while generating events; read by the notes.
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def days(self) -> int:
        """Number of calendar days spanned, admission day counted as day 0."""
        return (self.dischtime.date() - self.admittime.date()).days


@dataclass
class Patient:
    subject_id: int
    gender: str
    first_name: str
    anchor_age: int
    anchor_year: int
    anchor_year_group: str
    real_offset: int  # real year = shifted year - real_offset
    conditions: list[str]
    home_meds: list[str]
    anticoagulant: str | None
    weight: float
    height: float
    smoking: str
    alcohol: str
    living: str
    functional: str
    adherence: str
    allergies: str
    race: str
    marital: str
    insurance: str
    admissions: list[Admission] = field(default_factory=list)
    dod: dt.date | None = None


def _pick_diseases(*, rng: random.Random, index: int, count: int) -> list[str]:
    keys = list(DISEASES)
    # Cycling through the list for the first admission guarantees every scenario appears once N >= 12.
    chosen = [keys[index % len(keys)]]
    while len(chosen) < count:
        chosen.append(rng.choice(READMISSION[chosen[-1]]))
    return chosen


def _conditions(*, rng: random.Random, diseases: list[str]) -> list[str]:
    required: list[str] = []
    for key in diseases:
        for cond in DISEASES[key].requires:
            if cond not in required:
                required.append(cond)
    chosen = list(required)
    for cond, prob in BACKGROUND:
        if cond not in chosen and rng.random() < prob:
            chosen.append(cond)
    for a, b in EXCLUSIVE:
        if a in chosen and b in chosen:
            chosen.remove(b if a in required else a)
    # Keep the registry's order: stable text in notes regardless of how conditions were picked.
    return [c for c in CONDITIONS if c in chosen]


def _home_meds(*, rng: random.Random, conditions: list[str], anticoagulant: str | None) -> list[str]:
    meds: list[str] = []
    for cond in conditions:
        for choice in CONDITIONS[cond].home_meds:
            drug = rng.choice(choice) if isinstance(choice, tuple) else choice
            if drug not in meds:
                meds.append(drug)
    if anticoagulant and anticoagulant not in meds:
        meds.append(anticoagulant)
    return meds


def plan_patient(*, rng: random.Random, index: int, subject_id: int, next_hadm: int) -> Patient:
    """Decide everything about patient number ``index``; ``next_hadm`` is the first free hadm_id."""
    count = 1 if rng.random() < 0.5 else (2 if rng.random() < 0.7 else 3)
    diseases = _pick_diseases(rng=rng, index=index, count=count)
    conditions = _conditions(rng=rng, diseases=diseases)
    anticoagulant = None
    if "af" in conditions or "dvt_hx" in conditions:
        anticoagulant = "warfarin" if "gi_bleed" in diseases or rng.random() < 0.5 else "apixaban"
    gender = rng.choice("FM")
    anchor_age = rng.randint(38, 86)
    anchor_year = rng.randint(2110, 2185)
    group = rng.choice(YEAR_GROUPS)
    real_anchor = group + rng.randint(0, 2)
    smoking = "current" if "tobacco" in conditions else rng.choice(("never", "former"))
    height = rng.gauss(163 if gender == "F" else 176, 6)
    bmi = rng.uniform(21, 36)
    patient = Patient(
        subject_id=subject_id,
        gender=gender,
        first_name=rng.choice(FIRST_NAMES_F if gender == "F" else FIRST_NAMES_M),
        anchor_age=anchor_age,
        anchor_year=anchor_year,
        anchor_year_group=f"{group} - {group + 2}",
        real_offset=anchor_year - real_anchor,
        conditions=conditions,
        home_meds=_home_meds(rng=rng, conditions=conditions, anticoagulant=anticoagulant),
        anticoagulant=anticoagulant,
        weight=round(bmi * (height / 100) ** 2, 1),
        height=round(height),
        smoking=smoking,
        alcohol=rng.choice(("none", "social", "social", "heavy")),
        living=rng.choice(("lives with spouse", "lives alone", "lives with daughter", "lives in assisted living")),
        functional=rng.choice(
            (
                "independent in all ADLs",
                "independent, walks with a cane",
                "needs help with bathing and stairs",
                "uses a walker, independent in ADLs",
            )
        ),
        adherence=rng.choice(
            (
                "takes medications as prescribed",
                "uses a pill box filled by daughter",
                "admits to missing evening doses several times a week",
                "stopped one medication because of cost",
            )
        ),
        allergies=rng.choice(
            (
                "No Known Allergies / Adverse Drug Reactions",
                "Penicillins",
                "Sulfa (Sulfonamide Antibiotics)",
                "No Known Allergies / Adverse Drug Reactions",
                "Codeine",
            )
        ),
        race=rng.choice(
            ("WHITE", "WHITE", "BLACK/AFRICAN AMERICAN", "HISPANIC/LATINO - PUERTO RICAN", "ASIAN - CHINESE", "UNKNOWN")
        ),
        marital=rng.choice(("MARRIED", "SINGLE", "WIDOWED", "DIVORCED")),
        insurance=rng.choice(("Medicare", "Medicaid", "Other")) if anchor_age < 65 else "Medicare",
    )
    # Penicillin allergy would contradict piperacillin-tazobactam / cephalosporin orders.
    if patient.allergies == "Penicillins" and set(diseases) & {"sepsis_pna", "pyelo", "cellulitis"}:
        patient.allergies = "Codeine"

    start = dt.datetime(
        anchor_year + rng.randint(0, 2), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    )
    hadm = next_hadm
    for n, key in enumerate(diseases):
        disease = DISEASES[key]
        los = rng.randint(*disease.los)
        admit = start
        discharge = (admit + dt.timedelta(days=los)).replace(hour=rng.randint(11, 17), minute=rng.randint(0, 59))
        real_date = dt.date(admit.year - patient.real_offset, admit.month, min(admit.day, 28))
        adm = Admission(
            hadm_id=hadm,
            disease=key,
            admittime=admit,
            dischtime=discharge,
            icd_version=9 if real_date < ICD10_START else 10,
            age=anchor_age + (admit.year - anchor_year),
            edregtime=admit - dt.timedelta(minutes=rng.randint(150, 420)),
            edouttime=admit + dt.timedelta(minutes=rng.randint(5, 40)),
        )
        if rng.random() < disease.icu:
            adm.icu_in = adm.edouttime  # straight from the ED to the unit
            adm.icu_out = min(adm.icu_in + dt.timedelta(hours=rng.randint(26, 60)), discharge - dt.timedelta(hours=20))
        patient.admissions.append(adm)
        hadm += 1
        # Next admission 2-20 months later: long enough for outpatient follow-up in between.
        start = (discharge + dt.timedelta(days=rng.randint(60, 600))).replace(hour=rng.randint(0, 23))
        if n == len(diseases) - 1:
            last = patient.admissions[-1]
            # In-hospital mortality concentrated where it is clinically plausible: septic shock, major bleeding.
            risk = {"sepsis_pna": 0.6 if last.age >= 55 else 0.1, "gi_bleed": 0.25 if last.age >= 75 else 0.0}
            if rng.random() < risk.get(key, 0.0):
                last.died = True
                patient.dod = last.dischtime.date()
            elif rng.random() < 0.06:
                patient.dod = (last.dischtime + dt.timedelta(days=rng.randint(30, 300))).date()
    return patient
