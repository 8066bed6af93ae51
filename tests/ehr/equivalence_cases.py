"""A seeded record and a few hundred generated calls for the before/after comparison of the EHR read tools
(issue 37: the tools were rewritten for speed; their results must not change).

The record is made here, with fixed ids (no factory sequences), so that the stored results in
``tests/ehr/data/tool_equivalence.json`` do not depend on test order or database. Cases: the tools' parameters
varied over codes (prefixes, dotted, lower case, title words, LIKE wildcards, unknown), drug words, statuses,
admissions (none, each, another patient's, unknown), unknown patients, session dates (before, during, between and
after the stays) and both bounds modes.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from ehr import models as m

SUBJECT = 19_000_001
OTHER_SUBJECT = 19_000_002
UNKNOWN_SUBJECT = 19_999_999
SEED = 37

_DX = [
    ("I48", 10, "Atrial fibrillation"),
    ("I480", 10, "Paroxysmal atrial fibrillation"),
    ("I4891", 10, "Unspecified atrial fibrillation"),
    ("I509", 10, "Heart failure, unspecified"),
    ("I5023", 10, "Acute on chronic systolic (congestive) heart failure"),
    ("N183", 10, "Chronic kidney disease, stage 3 (moderate)"),
    ("N179", 10, "Acute kidney failure, unspecified"),
    ("E119", 10, "Type 2 diabetes mellitus without complications"),
    ("I10", 10, "Essential (primary) hypertension"),
    ("J189", 10, "Pneumonia, unspecified organism"),
    ("A419", 10, "Sepsis, unspecified organism"),
    ("D649", 10, "Anemia, unspecified"),
    ("E871", 10, "Hypo-osmolality and hyponatremia"),
    ("Z7901", 10, "Long term (current) use of anticoagulants"),
    ("F17210", 10, "Nicotine dependence, cigarettes, uncomplicated"),
    ("4280", 9, "Congestive heart failure, unspecified"),
    ("42731", 9, "Atrial fibrillation"),
    ("5849", 9, "Acute kidney failure, unspecified"),
    ("4019", 9, "Unspecified essential hypertension"),
    ("25000", 9, "Diabetes mellitus without mention of complication, type II"),
    ("486", 9, "Pneumonia, organism unspecified"),
    ("2851", 9, "Acute posthemorrhagic anemia"),
    ("V5861", 9, "Long-term (current) use of anticoagulants"),
    ("I2510", 10, "Atherosclerotic heart disease of native coronary artery without angina pectoris"),
    ("K219", 10, "Gastro-esophageal reflux disease without esophagitis"),
    ("R7881", 10, "Bacteremia 100% confirmed_case"),
]
# Coded for the patient, absent from the dictionary (the title falls back to the code).
_DX_UNTITLED = [("Q999", 10), ("7999", 9)]
_PX = [
    ("5A1D70Z", 10, "Performance of Urinary Filtration, Intermittent, Less than 6 Hours Per Day"),
    ("02HV33Z", 10, "Insertion of Infusion Device into Superior Vena Cava, Percutaneous Approach"),
    ("0BH17EZ", 10, "Insertion of Endotracheal Airway into Trachea, Via Natural or Artificial Opening"),
    ("3E0G76Z", 10, "Introduction of Nutritional Substance into Upper GI, Via Natural or Artificial Opening"),
    ("3893", 9, "Venous catheterization, not elsewhere classified"),
    ("9604", 9, "Insertion of endotracheal tube"),
]
_DRUGS = [
    "Warfarin",
    "Heparin",
    "Heparin Sodium",
    "Vancomycin",
    "Piperacillin-Tazobactam",
    "Furosemide",
    "Metoprolol Tartrate",
    "Insulin",
    "Acetaminophen",
    "Sodium Chloride 0.9%  Flush",
    "Potassium Chloride",
    "Apixaban",
    "Docusate_Sodium",
]
_EMAR_EVENTS = ["Administered", "Not Given", "Held", "Stopped", "Started", "Delayed Administered", "Flushed", None]
_UNITS = ["Emergency Department", "Medicine", "Medical Intensive Care Unit (MICU)", "Cardiology", None]

# Admissions of SUBJECT: (admit, discharge); the last has no discharge yet, one stay has a death time.
_STAYS = [
    ("2170-02-03 11:00", "2170-02-09 15:00"),
    ("2172-06-10 22:30", "2172-06-20 10:00"),
    ("2175-11-01 07:00", "2175-11-04 18:00"),
    ("2178-04-12 16:45", "2178-04-30 12:00"),
    ("2180-07-18 08:00", None),
]
HADM_IDS = [29_000_001 + i for i in range(len(_STAYS))]
OTHER_HADM = 29_100_001
# Session dates: before any stay, on an admission day, inside stays, between stays, after them all.
DATES = [
    dt.date(2169, 12, 1),
    dt.date(2170, 2, 3),
    dt.date(2170, 2, 6),
    dt.date(2172, 6, 15),
    dt.date(2174, 1, 1),
    dt.date(2178, 4, 20),
    dt.date(2178, 5, 1),
    dt.date(2180, 7, 19),
    dt.date(2180, 7, 25),
    dt.date(2190, 1, 1),
]


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def build() -> None:
    """Create the record (and a second patient, whose admission is not SUBJECT's)."""
    rng = random.Random(SEED)
    m.Patient.objects.create(subject_id=SUBJECT, gender="M", anchor_age=55, anchor_year=2172, dod=dt.date(2181, 2, 1))
    m.Patient.objects.create(subject_id=OTHER_SUBJECT, gender="F", anchor_age=40, anchor_year=2175, dod=None)
    m.Admission.objects.create(
        subject_id=OTHER_SUBJECT,
        hadm_id=OTHER_HADM,
        admittime=_at("2176-01-01 10:00"),
        dischtime=_at("2176-01-05 10:00"),
        admission_type="ELECTIVE",
    )
    # The dictionaries are this record's alone (the test database also holds the demo cohort's).
    m.DIcdDiagnosis.objects.all().delete()
    m.DIcdProcedure.objects.all().delete()
    m.DIcdDiagnosis.objects.bulk_create(m.DIcdDiagnosis(icd_code=c, icd_version=v, long_title=t) for c, v, t in _DX)
    m.DIcdProcedure.objects.bulk_create(m.DIcdProcedure(icd_code=c, icd_version=v, long_title=t) for c, v, t in _PX)
    dx, px, rx, emar, transfers, services = [], [], [], [], [], []
    pharmacy = 39_000_000
    for i, ((admit, disch), hadm) in enumerate(zip(_STAYS, HADM_IDS, strict=True)):
        start = _at(admit)
        end = _at(disch) if disch else start + dt.timedelta(days=9)
        m.Admission.objects.create(
            subject_id=SUBJECT,
            hadm_id=hadm,
            admittime=start,
            dischtime=_at(disch) if disch else None,
            deathtime=_at(disch) if i == 3 else None,
            admission_type=rng.choice(["EW EMER.", "URGENT", "ELECTIVE"]),
            admission_location=rng.choice(["EMERGENCY ROOM", "TRANSFER FROM HOSPITAL", None]),
            discharge_location=rng.choice(["HOME", "SKILLED NURSING FACILITY", None]),
            insurance=rng.choice(["Medicare", "Other", None]),
            language=rng.choice(["ENGLISH", "?", None]),
            marital_status=rng.choice(["MARRIED", "WIDOWED", None]),
            race=rng.choice(["WHITE", "BLACK/AFRICAN AMERICAN", None]),
        )
        hours = int((end - start).total_seconds() // 3600)
        pool = [(c, v) for c, v, _ in _DX] + _DX_UNTITLED
        for seq, (code, version) in enumerate(rng.sample(pool, rng.randint(10, 22)), start=1):
            dx.append(m.DiagnosisIcd(subject_id=SUBJECT, hadm_id=hadm, seq_num=seq, icd_code=code, icd_version=version))
        for seq in range(1, rng.randint(1, 5)):
            code, version, _ = rng.choice(_PX)
            day = (start + dt.timedelta(hours=rng.randint(0, hours))).date()
            px.append(
                m.ProcedureIcd(
                    subject_id=SUBJECT, hadm_id=hadm, seq_num=seq, chartdate=day, icd_code=code, icd_version=version
                )
            )
        t = start
        for k in range(rng.randint(1, 4)):
            out = t + dt.timedelta(hours=rng.randint(3, 60))
            transfers.append(
                m.Transfer(
                    subject_id=SUBJECT,
                    hadm_id=hadm,
                    transfer_id=49_000_000 + i * 10 + k,
                    eventtype=rng.choice(["ED", "admit", "transfer"]),
                    careunit=rng.choice(_UNITS),
                    intime=t,
                    outtime=out if rng.random() < 0.85 else None,
                )
            )
            services.append(
                m.Service(subject_id=SUBJECT, hadm_id=hadm, transfertime=t, curr_service=rng.choice(["MED", "CMED"]))
            )
            t = out
        transfers.append(
            m.Transfer(
                subject_id=SUBJECT, hadm_id=hadm, transfer_id=49_000_000 + i * 10 + 9, eventtype="discharge", intime=end
            )
        )
        for _ in range(rng.randint(20, 40)):
            pharmacy += 1
            begin = start + dt.timedelta(minutes=rng.randint(0, hours * 60))
            dose = rng.choice(["5", "1-2", "0.5", "", None, "40"])
            rx.append(
                m.Prescription(
                    subject_id=SUBJECT,
                    hadm_id=hadm,
                    pharmacy_id=pharmacy,
                    starttime=None if rng.random() < 0.04 else begin,
                    stoptime=None if rng.random() < 0.15 else begin + dt.timedelta(hours=rng.randint(1, 200)),
                    drug_type=rng.choice(["MAIN", "BASE", ""]),
                    drug=rng.choice(_DRUGS),
                    formulary_drug_cd=rng.choice(["WARF5", "HEPA5I", None]),
                    ndc=rng.choice(["00056017270", "0", "00000000000", None]),
                    prod_strength=rng.choice(["5mg Tablet", "5000 Units / mL", None]),
                    dose_val_rx=dose,
                    dose_unit_rx=rng.choice(["mg", "UNIT", None]),
                    doses_per_24_hrs=rng.choice([None, 1.0, 2.0, 0.5, 3.0]),
                    route=rng.choice(["PO", "IV", "SC", None]),
                )
            )
            for n in range(rng.randint(0, 3)):
                emar.append(
                    m.Emar(
                        subject_id=SUBJECT,
                        hadm_id=hadm if rng.random() < 0.9 else None,
                        emar_id=f"{SUBJECT}-{len(emar)}",
                        emar_seq=len(emar),
                        pharmacy_id=pharmacy if rng.random() < 0.8 else None,
                        charttime=begin + dt.timedelta(hours=6 * n, minutes=len(emar) % 7),
                        medication=rx[-1].drug if rng.random() < 0.95 else None,
                        event_txt=rng.choice(_EMAR_EVENTS),
                        scheduletime=begin + dt.timedelta(hours=6 * n) if rng.random() < 0.6 else None,
                    )
                )
    dx.append(m.DiagnosisIcd(subject_id=OTHER_SUBJECT, hadm_id=OTHER_HADM, seq_num=1, icd_code="I48", icd_version=10))
    m.DiagnosisIcd.objects.bulk_create(dx)
    m.ProcedureIcd.objects.bulk_create(px)
    m.Prescription.objects.bulk_create(rx)
    m.Emar.objects.bulk_create(emar)
    m.Transfer.objects.bulk_create(transfers)
    m.Service.objects.bulk_create(services)


_CODES = [
    "I48",
    "i48",
    "I48.91",
    " I50 ",
    "I5023",
    "428",
    "4273",
    "N18",
    "Q999",
    "fibrillation",
    "Atrial Fibrillation",
    "heart failure",
    "FAILURE",
    "kidney",
    "kidney disease, stage",
    "anticoagulants",
    "100%",
    "confirmed_case",
    "_",
    "%",
    "unspecified",
    "pneumonia, organism",
    "zzz",
    "",
    "E11.9",
    "V58",
]
_MEDS = [
    "warfarin",
    "Heparin",
    "HEPARIN SODIUM",
    "vanco",
    "tazo",
    "sodium",
    "0.9%",
    "_",
    "%",
    "docusate_",
    "metoprolol tartrate",
    "aspirin",
    " insulin ",
    "",
]


def calls(*, per_tool: int = 80) -> list[dict[str, Any]]:
    """Generated calls: ``{"tool", "arguments", "current_date", "bounds"}``."""
    rng = random.Random(SEED)
    hadms = [None, None, *HADM_IDS, OTHER_HADM, 1]
    out = []

    def scope(day: dt.date) -> dict[str, Any]:
        """Mostly the patient and an admission started by ``day`` (or none); sometimes any other."""
        subject = SUBJECT if rng.random() < 0.9 else rng.choice([OTHER_SUBJECT, UNKNOWN_SUBJECT])
        args: dict[str, Any] = {"subject_id": subject}
        started = [h for h, (admit, _) in zip(HADM_IDS, _STAYS, strict=True) if _at(admit).date() < day]
        hadm = rng.choice([None, *started]) if rng.random() < 0.8 else rng.choice(hadms)
        if hadm is not None:
            args["hadm_id"] = hadm
        return args

    extra = {
        "Patient.read": lambda: {},
        "Encounter.search": lambda: {},
        "Procedure.search": lambda: {},
        "Condition.search": lambda: {
            k: v
            for k, v in (
                ("code", rng.choice([*_CODES, None, None])),
                ("clinical_status", rng.choice(["active", "resolved", "inactive", None, None])),
            )
            if v is not None
        },
        "MedicationRequest.search": lambda: {
            k: v
            for k, v in (
                ("medication", rng.choice([*_MEDS, None, None])),
                ("status", rng.choice(["active", "completed", "stopped", None, None])),
            )
            if v is not None
        },
        "MedicationAdministration.search": lambda: {
            k: v for k, v in (("medication", rng.choice([*_MEDS, None, None])),) if v is not None
        },
    }
    for tool, more in extra.items():
        for _ in range(per_tool):
            day = rng.choice(DATES)
            args = scope(day)
            if tool == "Patient.read":
                args.pop("hadm_id", None)
            out.append(
                {
                    "tool": tool,
                    "arguments": {**args, **more()},
                    "current_date": day.isoformat(),
                    "bounds": "release" if rng.random() < 0.2 else "strict",
                }
            )
    # The whole history (results truncated to the tools' page size, totals beyond it), in both bounds modes.
    for tool in extra:
        for bounds in ("strict", "release"):
            for day in (DATES[-3], DATES[-1]):
                args = {"subject_id": SUBJECT} | ({"code": "i"} if tool == "Condition.search" else {})
                out.append({"tool": tool, "arguments": args, "current_date": day.isoformat(), "bounds": bounds})
    return out
