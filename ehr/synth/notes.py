"""Discharge summaries and radiology reports in MIMIC-IV-Note style.

The discharge note is rendered from the admission's facts (labs actually drawn, orders actually
written, cultures actually grown), never from independent random draws, so a reader can verify
every statement against the structured tables. De-identified spans are ``___`` as in MIMIC.
"""

import datetime as dt
import random
import re

from ehr.synth.catalog import LAB_ITEMS
from ehr.synth.conditions import CONDITIONS
from ehr.synth.diseases import DISEASES, SUPERSEDES
from ehr.synth.drugs import DRUGS
from ehr.synth.microbes import ORGANISMS
from ehr.synth.plan import Admission, Patient
from ehr.synth.sink import Sink

# Section headings, in MIMIC order. Tests and the agentic-patient builder split notes on these.
HEADINGS = (
    "Chief Complaint:",
    "Major Surgical or Invasive Procedure:",
    "History of Present Illness:",
    "Past Medical History:",
    "Social History:",
    "Family History:",
    "Physical Exam:",
    "Pertinent Results:",
    "Brief Hospital Course:",
    "Medications on Admission:",
    "Discharge Medications:",
    "Discharge Disposition:",
    "Discharge Diagnosis:",
    "Discharge Condition:",
    "Discharge Instructions:",
    "Followup Instructions:",
)
RADIOLOGY_HEADINGS = ("EXAMINATION:", "INDICATION:", "TECHNIQUE:", "COMPARISON:", "FINDINGS:", "IMPRESSION:")

# Abbreviations MIMIC's "Pertinent Results" lines use for each lab.
SHORT = {
    "wbc": "WBC",
    "hemoglobin": "Hgb",
    "hematocrit": "Hct",
    "platelets": "Plt Ct",
    "glucose": "Glucose",
    "bun": "UreaN",
    "creatinine": "Creat",
    "sodium": "Na",
    "potassium": "K",
    "chloride": "Cl",
    "bicarbonate": "HCO3",
    "anion_gap": "AnGap",
    "inr": "INR(PT)",
    "pt": "PT",
    "ptt": "PTT",
    "lactate": "Lactate",
    "troponin_t": "cTropnT",
    "ntprobnp": "proBNP",
    "vancomycin": "Vanco",
    "magnesium": "Mg",
    "crp": "CRP",
    "hba1c": "%HbA1c",
    "calcium": "Calcium",
    "albumin": "Albumin",
    "bilirubin": "TotBili",
}
# Admission exam findings that go with each diagnosis (the rest of the exam is unremarkable).
EXAM = {
    "afib_rvr": "CV: irregularly irregular, tachycardic, no murmurs\nLUNGS: clear bilaterally\nEXT: no edema",
    "gi_bleed": "CV: tachycardic, regular\nABD: soft, mild epigastric tenderness\nRECTAL: black guaiac-positive "
    "stool\nSKIN: pale conjunctivae",
    "chf": "NECK: JVP to the angle of the jaw\nLUNGS: bibasilar crackles\nCV: S3 gallop\nEXT: 2+ pitting edema "
    "to the knees",
    "hyperkalemia": "CV: bradycardic, regular\nNEURO: strength 4+/5 in the legs, reflexes intact\nEXT: trace edema",
    "sepsis_pna": "LUNGS: crackles and bronchial breath sounds at the right base\nCV: tachycardic\nNEURO: "
    "oriented to self only\nSKIN: warm, capillary refill 3 seconds",
    "pyelo": "ABD: soft, suprapubic tenderness\nBACK: right costovertebral angle tenderness",
    "cellulitis": "EXT: right shin with 12 x 8 cm warm, tender, well-demarcated erythema and a small draining "
    "wound; no crepitus",
    "dka": "GENERAL: dry mucous membranes, fruity breath\nLUNGS: deep rapid (Kussmaul) respirations\nABD: diffuse "
    "mild tenderness without rebound",
    "copd": "LUNGS: diffuse expiratory wheezes, prolonged expiratory phase, accessory muscle use\nCV: regular",
    "nstemi": "CV: regular, no murmurs\nLUNGS: clear\nEXT: no edema",
    "pe": "LUNGS: clear\nCV: tachycardic, regular\nEXT: left calf swelling and tenderness",
    "aki": "GENERAL: dry mucous membranes\nCV: tachycardic, orthostatic\nEXT: no edema",
}

# The clinical question an ordering physician writes after "//" in the indication, by exam family.
QUESTIONS = {
    "CHEST": "pneumonia? pulmonary edema? effusion?",
    "CTA": "pulmonary embolism?",
    "RENAL": "hydronephrosis? kidney size?",
    "UNILAT": "deep venous thrombosis?",
}
FREQ = {1: "DAILY", 2: "BID", 3: "Q8H", 4: "QID", 6: "Q4H", 24: "CONTINUOUS"}
SERVICE_NAME = {"MED": "MEDICINE", "CMED": "CARDIOLOGY"}


def _sig(*, drug_key: str) -> str:
    d = DRUGS[drug_key]
    if drug_key == "insulin":
        return "Insulin SC Sliding Scale per fingerstick before meals and at bedtime"
    dose = d.dose if d.unit != "NEB" else "1"
    unit = d.unit if d.unit != "NEB" else "NEB"
    return f"{d.name} {dose} {unit} {d.route} {FREQ.get(int(d.per_day), 'DAILY')}"


def _results_line(*, when: dt.datetime, values: dict[str, float]) -> list[str]:
    lines = []
    for group in (
        ("wbc", "hemoglobin", "hematocrit", "platelets"),
        ("glucose", "bun", "creatinine", "sodium", "potassium", "chloride", "bicarbonate", "anion_gap"),
        ("inr", "pt", "ptt"),
        ("calcium", "magnesium", "albumin", "bilirubin"),
        ("lactate", "troponin_t", "ntprobnp", "vancomycin", "crp", "hba1c"),
    ):
        parts = []
        for key in group:
            if key in values:
                item = LAB_ITEMS[key]
                value = values[key]
                text = f"{value:.{item.decimals}f}" if item.decimals else str(int(value))
                abnormal = (item.low is not None and value < item.low) or (item.high is not None and value > item.high)
                parts.append(f"{SHORT[key]}-{text}{'*' if abnormal else ''}")
        if parts:
            lines.append(f"___ {when.strftime('%I:%M%p')} BLOOD " + " ".join(parts))
    return lines


def choose_hpi(*, rng: random.Random, adm: Admission) -> None:
    """Pick the HPI wording early: the admission pain score charted in chartevents follows its severity."""
    d = DISEASES[adm.disease]
    h = {k: rng.choice(v) for k, v in d.hpi.items()}
    # Onset and duration are written as matching pairs: draw them with one index.
    pair = rng.randrange(len(d.hpi["onset"]))
    h["onset"] = d.hpi["onset"][pair]
    h["duration"] = d.hpi["duration"][pair % len(d.hpi["duration"])]
    adm.facts["hpi"] = h
    # Charted pain follows the stated severity: "7/10" directly, else the adjective.
    match = re.search(r"(\d+)/10", h["severity"])
    words = {"mild": 2, "moderate": 5, "severe": 7}
    adm.facts["pain_score"] = int(match.group(1)) if match else words.get(h["severity"].split()[0].strip(",;"), 4)


def _in_sentence(*, text: str) -> str:
    """Lower-case a title's first letter for use mid-sentence, keeping acronyms (COPD, INR) intact."""
    first = text.split()[0]
    return text if first.isupper() else text[0].lower() + text[1:]


def _hpi(*, patient: Patient, adm: Admission) -> str:
    d = DISEASES[adm.disease]
    h = adm.facts["hpi"]
    sex = "woman" if patient.gender == "F" else "man"
    title = "Ms." if patient.gender == "F" else "Mr."
    pmh = ", ".join(CONDITIONS[c].name for c in patient.conditions[:4]) or "no significant history"
    return (
        f"{title} ___ is a {adm.age} year old {sex} with {pmh} who presents with {d.chief_complaint.lower()}.\n"
        f"Onset: {h['onset']}.\n"
        f"Location: {h['location']}.\n"
        f"Duration: {h['duration']}.\n"
        f"Character: {h['character']}.\n"
        f"Severity: {h['severity']}.\n"
        f"Modifying factors: {h['modifiers']}.\n"
        f"Associated symptoms: {h['associated']}.\n"
        f"Medication adherence: {patient.adherence}.\n"
        f"In the ED, initial vitals were: {_vitals_text(adm=adm)}."
    )


def _vitals_text(*, adm: Admission) -> str:
    v = adm.facts.get("admit_vitals") or {}
    if not v:
        return "___"
    return (
        f"T {v['temp']:.1f} HR {v['hr']:.0f} BP {v['sbp']:.0f}/{v['dbp']:.0f} RR {v['rr']:.0f} SpO2 {v['spo2']:.0f}% RA"
    )


def _course(*, patient: Patient, adm: Admission) -> str:
    d = DISEASES[adm.disease]
    lines = [f"# {d.name}: {d.course}"]
    organism = adm.facts.get("organism")
    if organism:
        lines.append(
            f"# Microbiology: cultures grew {ORGANISMS[organism].name}; antibiotics adjusted to susceptibilities."
        )
    elif d.cultures:
        lines.append("# Microbiology: cultures without growth to date.")
    labs = adm.facts.get("lab_results", {})
    days = sorted(labs)
    for key in ("creatinine", "potassium", "glucose", "inr", "hemoglobin", "vancomycin", "troponin_t", "lactate"):
        series = [(day, labs[day][key]) for day in days if key in labs[day]]
        if len(series) >= 2:
            item = LAB_ITEMS[key]
            trend = " -> ".join(f"{v:.{item.decimals}f}" if item.decimals else str(int(v)) for _, v in series[:6])
            lines.append(f"# {item.label} trend: {trend}.")
    for cond in patient.conditions[:4]:
        lines.append(f"# {CONDITIONS[cond].name}: chronic, stable; home regimen continued unless noted.")
    if adm.died:
        lines.append(
            "# Despite maximal therapy the patient developed refractory shock. After discussion with the "
            "family the patient was made comfort measures only and expired."
        )
    return "\n".join(lines)


def _instructions(*, patient: Patient, adm: Admission, started: list[str], stopped: list[str]) -> str:
    d = DISEASES[adm.disease]
    text = f"Dear {'Ms.' if patient.gender == 'F' else 'Mr.'} ___,\n\n"
    text += f"You were admitted to ___ for {_in_sentence(text=d.name)}.\n\n{d.instructions}\n\n"
    if started or stopped:
        changes = [f"- START {_sig(drug_key=k)}" for k in started] + [f"- STOP {DRUGS[k].name}" for k in stopped]
        text += "MEDICATION CHANGES:\n" + "\n".join(changes) + "\n\n"
    return text + "It was a pleasure taking care of you.\n\nSincerely,\nYour ___ Team"


def discharge_note(
    *,
    sink: Sink,
    rng: random.Random,
    patient: Patient,
    adm: Admission,
    seq: int,
    home_before: list[str],
    home_after: list[str],
    procedures: list[str],
) -> None:
    d = DISEASES[adm.disease]
    labs = adm.facts.get("lab_results", {})
    times = adm.facts.get("lab_times", {})
    first_day, last_day = (min(labs), max(labs)) if labs else (0, 0)
    admit_lines = _results_line(when=times.get(first_day, adm.admittime), values=labs.get(first_day, {}))
    disch_lines = _results_line(when=times.get(last_day, adm.admittime), values=labs.get(last_day, {}))
    studies = adm.facts.get("studies", [])
    results = ["ADMISSION LABS:", *admit_lines, "", "DISCHARGE LABS:", *disch_lines]
    for name, impression in studies:
        results += ["", f"{name}: {impression}"]
    meds_before = [f"{n}. {_sig(drug_key=k)}" for n, k in enumerate(home_before, start=1)] or ["None"]
    meds_after = [f"{n}. {_sig(drug_key=k)}" for n, k in enumerate(home_after, start=1)] or ["None"]
    started = [k for k in home_after if k not in home_before]
    stopped = [k for k in home_before if k not in home_after]
    secondary = [CONDITIONS[c].name for c in patient.conditions if c not in SUPERSEDES.get(adm.disease, ())]
    activity = (
        "Ambulatory - Independent"
        if "independent" in patient.functional
        else "Ambulatory - requires assistance or aid (walker or cane)"
    )
    body = {
        "Chief Complaint:": d.chief_complaint,
        "Major Surgical or Invasive Procedure:": "\n".join(procedures) or "None",
        "History of Present Illness:": _hpi(patient=patient, adm=adm),
        "Past Medical History:": "\n".join(f"- {CONDITIONS[c].name}" for c in patient.conditions) or "None",
        "Social History:": (
            f"Lives: {patient.living}. Smoking: {patient.smoking}"
            f"{' (1 pack per day for 30 years)' if patient.smoking == 'current' else ''}. "
            f"Alcohol: {patient.alcohol}. Functional status: {patient.functional}. Occupation: ___"
        ),
        "Family History:": rng.choice(
            (
                "Father with coronary artery disease in his 60s. Mother with diabetes.",
                "Non-contributory.",
                "Mother with stroke at age ___.",
            )
        ),
        "Physical Exam:": (
            f"ADMISSION PHYSICAL EXAM:\nVS: {_vitals_text(adm=adm)}\nGENERAL: "
            f"{'uncomfortable, ' if adm.facts.get('pain_score', 0) >= 5 else ''}alert and oriented\n"
            f"{EXAM[adm.disease]}\n"
            "DISCHARGE PHYSICAL EXAM:\n"
            + (
                "Pupils fixed, no spontaneous respirations, no heart sounds."
                if adm.died
                else "VS: afebrile, hemodynamically stable\nGENERAL: comfortable"
            )
        ),
        "Pertinent Results:": "\n".join(results),
        "Brief Hospital Course:": _course(patient=patient, adm=adm),
        "Medications on Admission:": "The Preadmission Medication list is accurate and complete.\n"
        + "\n".join(meds_before),
        "Discharge Medications:": "None" if adm.died else "\n".join(meds_after),
        "Discharge Disposition:": "Expired" if adm.died else adm.facts.get("discharge_location", "HOME").title(),
        "Discharge Diagnosis:": "Expired" if adm.died else f"Primary:\n{d.name}\n\nSecondary:\n" + "\n".join(secondary),
        "Discharge Condition:": "Mental Status: Clear and coherent.\nLevel of Consciousness: Alert and interactive.\n"
        f"Activity Status: {activity}.",
        "Discharge Instructions:": "Not applicable."
        if adm.died
        else _instructions(patient=patient, adm=adm, started=started, stopped=stopped),
        "Followup Instructions:": "___" if adm.died else d.followup,
    }
    header = (
        " \nName:  ___                     Unit No:   ___\n \n"
        "Admission Date:  ___              Discharge Date:   ___\n"
        f" \nDate of Birth:  ___             Sex:   {patient.gender}\n \n"
        f"Service: {SERVICE_NAME[d.service]}\n \nAllergies:\n{patient.allergies}\n \nAttending: ___.\n \n"
    )
    text = header + "".join(f"{h}\n{body[h]}\n \n" for h in HEADINGS)
    sink.add(
        "discharge",
        note_id=f"{patient.subject_id}-DS-{seq}",
        subject_id=patient.subject_id,
        hadm_id=adm.hadm_id,
        note_type="DS",
        note_seq=seq,
        charttime=dt.datetime.combine(adm.dischtime.date(), dt.time()),
        storetime=adm.dischtime + dt.timedelta(hours=rng.randint(2, 30)),
        text=text,
    )


def radiology_notes(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission, first_seq: int) -> int:
    """Write the admission's imaging reports; return the next free note_seq."""
    d = DISEASES[adm.disease]
    seq = first_seq
    studies: list[tuple[str, str]] = []
    sex = "woman" if patient.gender == "F" else "man"
    for n, study in enumerate(d.studies):
        when = adm.admittime + dt.timedelta(minutes=rng.randint(30, 240) + 180 * n)
        question = QUESTIONS.get(study.name.split()[0], "acute process?")
        findings = rng.choice(study.findings)
        impression = rng.choice(study.impression)
        technique = {
            "CHEST": "Chest PA and lateral views.",
            "CTA": "Contrast-enhanced CT of the chest with pulmonary arterial phase.",
            "RENAL": "Grayscale and color Doppler ultrasound of the kidneys.",
            "UNILAT": "Grayscale and Doppler ultrasound of the lower extremity veins.",
        }
        text = (
            f"EXAMINATION:  {study.name}\n\n"
            f"INDICATION:  ___ year old {sex} with {d.chief_complaint.lower()}  // {question}\n\n"
            f"TECHNIQUE:  {technique.get(study.name.split()[0], 'Standard protocol.')}\n\n"
            f"COMPARISON:  {'None.' if seq == 1 else '___'}\n\n"
            f"FINDINGS: \n\n{findings}\n\n"
            f"IMPRESSION: \n\n{impression}\n"
        )
        sink.add(
            "radiology",
            note_id=f"{patient.subject_id}-RR-{seq}",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            note_type="RR",
            note_seq=seq,
            charttime=when,
            storetime=when + dt.timedelta(minutes=rng.randint(20, 180)),
            text=text,
        )
        studies.append((study.name, impression))
        seq += 1
    adm.facts["studies"] = studies
    return seq
