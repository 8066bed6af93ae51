"""Chronic conditions (past medical history) and their effect on baseline labs and home medications.

Each condition carries an ICD-10-CM and an ICD-9-CM code (no dots, as in MIMIC) so that an
admission can be coded in whichever version its real-world year used.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Condition:
    key: str
    name: str  # as written in Past Medical History
    icd10: str
    icd9: str
    # Baseline lab shifts the condition causes outside any acute illness (lab key -> value).
    baseline: dict[str, float] = field(default_factory=dict)
    # Home medications; a tuple of alternatives picks one per patient.
    home_meds: tuple[str | tuple[str, ...], ...] = ()


CONDITIONS: dict[str, Condition] = {
    c.key: c
    for c in (
        Condition("htn", "Hypertension", "I10", "4019", home_meds=(("lisinopril", "amlodipine"),)),
        Condition("t2dm", "Type 2 diabetes mellitus", "E119", "25000", {"glucose": 165, "hba1c": 7.9}, ("metformin",)),
        Condition(
            "t1dm",
            "Type 1 diabetes mellitus",
            "E109",
            "25001",
            {"glucose": 190, "hba1c": 8.8},
            ("insulin_glargine", "insulin"),
        ),
        Condition("af", "Atrial fibrillation", "I4891", "42731", home_meds=("metoprolol",)),
        Condition(
            "chf",
            "Chronic systolic heart failure",
            "I5022",
            "42822",
            {"ntprobnp": 1400},
            ("furosemide", "lisinopril", "spironolactone", "metoprolol"),
        ),
        Condition(
            "ckd",
            "Chronic kidney disease, stage 3",
            "N1830",
            "5853",
            {"creatinine": 1.8, "bun": 32, "hemoglobin": 11.2, "potassium": 4.8},
        ),
        Condition("cad", "Coronary artery disease", "I2510", "41401", home_meds=("aspirin", "atorvastatin")),
        Condition("hld", "Hyperlipidemia", "E785", "2724", home_meds=("atorvastatin",)),
        Condition(
            "copd",
            "Chronic obstructive pulmonary disease",
            "J449",
            "496",
            {"bicarbonate": 30},
            ("tiotropium", "albuterol"),
        ),
        Condition("hypothyroid", "Hypothyroidism", "E039", "2449", home_meds=("levothyroxine",)),
        Condition("gerd", "Gastroesophageal reflux disease", "K219", "53081", home_meds=("pantoprazole_po",)),
        Condition("tobacco", "Tobacco use", "F17210", "3051"),
        Condition("dvt_hx", "History of deep vein thrombosis", "Z86718", "V1251"),
    )
}

# Conditions that cannot coexist in one patient.
EXCLUSIVE: tuple[tuple[str, str], ...] = (("t1dm", "t2dm"),)

# Background conditions drawn at random, with their probability in an adult inpatient population.
BACKGROUND: tuple[tuple[str, float], ...] = (
    ("htn", 0.55),
    ("hld", 0.40),
    ("t2dm", 0.25),
    ("ckd", 0.18),
    ("cad", 0.15),
    ("gerd", 0.15),
    ("hypothyroid", 0.08),
    ("tobacco", 0.20),
)
