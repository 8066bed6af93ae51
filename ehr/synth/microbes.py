"""Microbiology dictionaries: organisms with their tested antibiotic panels, antibiotics, specimens."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Organism:
    itemid: int
    name: str
    gram: str  # gram stain description reported before the isolate is identified
    panel: tuple[str, ...]  # antibiotics tested, keys of ANTIBIOTICS


@dataclass(frozen=True)
class Antibiotic:
    itemid: int
    name: str
    s_mic: float  # typical susceptible MIC
    r_mic: float  # typical resistant MIC


ANTIBIOTICS: dict[str, Antibiotic] = {
    "ampicillin": Antibiotic(90003, "AMPICILLIN", 2, 32),
    "ampicillin_sulbactam": Antibiotic(90012, "AMPICILLIN/SULBACTAM", 2, 32),
    "cefazolin": Antibiotic(90004, "CEFAZOLIN", 1, 64),
    "ceftriaxone": Antibiotic(90017, "CEFTRIAXONE", 1, 64),
    "cefepime": Antibiotic(90026, "CEFEPIME", 1, 64),
    "ciprofloxacin": Antibiotic(90018, "CIPROFLOXACIN", 0.25, 4),
    "gentamicin": Antibiotic(90014, "GENTAMICIN", 1, 16),
    "meropenem": Antibiotic(90028, "MEROPENEM", 0.25, 16),
    "nitrofurantoin": Antibiotic(90015, "NITROFURANTOIN", 16, 128),
    "piperacillin_tazobactam": Antibiotic(90025, "PIPERACILLIN/TAZO", 4, 128),
    "trimethoprim_sulfa": Antibiotic(90019, "TRIMETHOPRIM/SULFA", 1, 16),
    "oxacillin": Antibiotic(90016, "OXACILLIN", 0.25, 4),
    "vancomycin": Antibiotic(90020, "VANCOMYCIN", 1, 32),
    "clindamycin": Antibiotic(90011, "CLINDAMYCIN", 0.25, 8),
    "tetracycline": Antibiotic(90021, "TETRACYCLINE", 1, 16),
    "levofloxacin": Antibiotic(90027, "LEVOFLOXACIN", 0.5, 8),
    "erythromycin": Antibiotic(90013, "ERYTHROMYCIN", 0.25, 8),
    "penicillin_g": Antibiotic(90010, "PENICILLIN G", 0.06, 4),
}

_GNR = (
    "ampicillin",
    "ampicillin_sulbactam",
    "cefazolin",
    "ceftriaxone",
    "cefepime",
    "ciprofloxacin",
    "gentamicin",
    "meropenem",
    "piperacillin_tazobactam",
    "trimethoprim_sulfa",
)

ORGANISMS: dict[str, Organism] = {
    "ecoli": Organism(80002, "ESCHERICHIA COLI", "GRAM NEGATIVE ROD(S)", (*_GNR, "nitrofurantoin")),
    "klebsiella": Organism(80004, "KLEBSIELLA PNEUMONIAE", "GRAM NEGATIVE ROD(S)", _GNR),
    "pseudomonas": Organism(
        80026,
        "PSEUDOMONAS AERUGINOSA",
        "GRAM NEGATIVE ROD(S)",
        ("cefepime", "ciprofloxacin", "gentamicin", "meropenem", "piperacillin_tazobactam", "levofloxacin"),
    ),
    "mrsa": Organism(
        80023,
        "STAPH AUREUS COAG +",
        "GRAM POSITIVE COCCI IN CLUSTERS",
        (
            "oxacillin",
            "vancomycin",
            "clindamycin",
            "erythromycin",
            "tetracycline",
            "trimethoprim_sulfa",
            "levofloxacin",
        ),
    ),
    "strep_pneumo": Organism(
        80052,
        "STREPTOCOCCUS PNEUMONIAE",
        "GRAM POSITIVE COCCI IN PAIRS AND CHAINS",
        ("penicillin_g", "ceftriaxone", "erythromycin", "levofloxacin", "vancomycin"),
    ),
}


@dataclass(frozen=True)
class Specimen:
    spec_itemid: int
    spec_type_desc: str
    test_itemid: int
    test_name: str


SPECIMENS: dict[str, Specimen] = {
    "blood": Specimen(70012, "BLOOD CULTURE", 90201, "Blood Culture, Routine"),
    "urine": Specimen(70079, "URINE", 90039, "URINE CULTURE"),
    "sputum": Specimen(70062, "SPUTUM", 90043, "RESPIRATORY CULTURE"),
    "wound": Specimen(70076, "SWAB", 90053, "WOUND CULTURE"),
    "mrsa_screen": Specimen(70091, "MRSA SCREEN", 90100, "MRSA SCREEN"),
}
