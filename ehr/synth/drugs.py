"""Drug formulary of the cohort: prescriptions columns per drug, plus a class used for coherence.

Product codes (NDC, GSN, formulary codes) are invented placeholders derived from a running
number: they only need to look like MIMIC's, never to identify a real product.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Drug:
    key: str
    name: str  # prescriptions.drug / emar.medication
    strength: str
    form: str  # form_rx
    dose: str
    unit: str
    disp: str  # form_val_disp
    disp_unit: str
    per_day: float
    route: str
    ndc: str
    gsn: str
    code: str  # formulary_drug_cd
    klass: str  # used for notes and coherence checks, not written to MIMIC columns


# Positional on purpose: each call below is one row of the formulary table.
def _d(
    key: str, name: str, strength: str, form: str, dose: str, unit: str, disp: str, disp_unit: str,
    per_day: float, route: str, klass: str, n: int,
) -> Drug:  # fmt: skip
    # Placeholder product codes derived from a running number: stable and obviously synthetic.
    return Drug(
        key,
        name,
        strength,
        form,
        dose,
        unit,
        disp,
        disp_unit,
        per_day,
        route,
        f"9{n:010d}",
        f"0{n:05d}",
        key.upper()[:6] + str(n % 100),
        klass,
    )


# fmt: off
_ROWS = (
    _d("warfarin", "Warfarin", "5mg Tablet", "TABLET", "5", "mg", "1", "TAB", 1, "PO/NG", "anticoagulant", 1),
    _d("apixaban", "Apixaban", "5 mg Tablet", "TABLET", "5", "mg", "1", "TAB", 2, "PO", "anticoagulant", 2),
    _d("heparin", "Heparin", "25,000 unit / 250 mL", "BAG",
       "1000", "UNIT/HR", "0.04", "BAG", 24, "IV", "anticoagulant", 3),
    _d("heparin_sc", "Heparin", "5000 Units / mL- 1mL Vial", "VIAL",
       "5000", "UNIT", "1", "mL", 3, "SC", "anticoagulant", 4),
    _d("enoxaparin", "Enoxaparin Sodium", "40mg/0.4mL Syringe", "SYRINGE",
       "40", "mg", "0.4", "mL", 1, "SC", "anticoagulant", 5),
    _d("lisinopril", "Lisinopril", "10 mg Tablet", "TABLET", "10", "mg", "1", "TAB", 1, "PO", "ace_inhibitor", 6),
    _d("furosemide_iv", "Furosemide", "40mg/4mL Vial", "VIAL", "40", "mg", "4", "mL", 2, "IV", "loop_diuretic", 7),
    _d("furosemide", "Furosemide", "20 mg Tablet", "TABLET", "20", "mg", "1", "TAB", 1, "PO", "loop_diuretic", 8),
    _d("spironolactone", "Spironolactone", "25 mg Tablet", "TABLET",
       "25", "mg", "1", "TAB", 1, "PO", "k_sparing_diuretic", 9),
    _d("vancomycin", "Vancomycin", "1g Frozen Bag", "BAG", "1000", "mg", "1", "BAG", 2, "IV", "antibiotic", 10),
    _d("pip_tazo", "Piperacillin-Tazobactam", "4.5 g Frozen Bag", "BAG",
       "4.5", "g", "1", "BAG", 3, "IV", "antibiotic", 11),
    _d("ceftriaxone", "CefTRIAXone", "1 g Frozen Bag", "BAG", "1", "g", "1", "BAG", 1, "IV", "antibiotic", 12),
    _d("cefazolin", "CeFAZolin", "2 g Frozen Bag", "BAG", "2", "g", "1", "BAG", 3, "IV", "antibiotic", 13),
    _d("azithromycin", "Azithromycin", "250 mg Tablet", "TABLET", "500", "mg", "2", "TAB", 1, "PO", "antibiotic", 14),
    _d("cephalexin", "Cephalexin", "500 mg Capsule", "CAPSULE", "500", "mg", "1", "CAP", 4, "PO", "antibiotic", 15),
    _d("insulin_glargine", "Glargine", "100 Units / mL - 10mL Vial", "VIAL",
       "20", "UNIT", "0.2", "mL", 1, "SC", "insulin", 16),
    _d("insulin", "Insulin", "100 Units / mL - 10 mL Vial", "VIAL", "0", "UNIT", "0", "mL", 4, "SC", "insulin", 17),
    _d("insulin_drip", "Insulin Human Regular", "100 Units / 100 mL Bag", "BAG",
       "5", "UNIT/HR", "1", "BAG", 24, "IV DRIP", "insulin", 18),
    _d("metformin", "MetFORMIN (Glucophage)", "500 mg Tablet", "TABLET",
       "500", "mg", "1", "TAB", 2, "PO", "antidiabetic", 19),
    _d("metoprolol", "Metoprolol Tartrate", "25 mg Tablet", "TABLET",
       "25", "mg", "1", "TAB", 2, "PO", "beta_blocker", 20),
    _d("diltiazem", "Diltiazem", "30 mg Tablet", "TABLET", "30", "mg", "1", "TAB", 4, "PO", "ccb", 21),
    _d("amlodipine", "Amlodipine", "5 mg Tablet", "TABLET", "5", "mg", "1", "TAB", 1, "PO", "ccb", 22),
    _d("atorvastatin", "Atorvastatin", "40 mg Tablet", "TABLET", "40", "mg", "1", "TAB", 1, "PO", "statin", 23),
    _d("aspirin", "Aspirin", "81 mg Tablet", "TABLET", "81", "mg", "1", "TAB", 1, "PO", "antiplatelet", 24),
    _d("clopidogrel", "Clopidogrel", "75 mg Tablet", "TABLET", "75", "mg", "1", "TAB", 1, "PO", "antiplatelet", 25),
    _d("kcl", "Potassium Chloride", "20 mEq Tablet", "TABLET", "40", "mEq", "2", "TAB", 1, "PO", "electrolyte", 26),
    _d("kcl_iv", "Potassium Chloride", "20 mEq / 100 mL SW", "BAG",
       "20", "mEq", "1", "BAG", 2, "IV", "electrolyte", 27),
    _d("sodium_polystyrene", "Sodium Polystyrene Sulfonate", "15 g / 60 mL Suspension", "SUSP",
       "15", "gm", "60", "mL", 1, "PO", "k_binder", 28),
    _d("ns", "Sodium Chloride 0.9%", "1000 mL Bag", "BAG", "1000", "mL", "1", "BAG", 2, "IV", "fluid", 29),
    _d("pantoprazole", "Pantoprazole", "40 mg Vial", "VIAL", "40", "mg", "1", "VIAL", 2, "IV", "ppi", 30),
    _d("pantoprazole_po", "Pantoprazole", "40 mg Tablet", "TABLET", "40", "mg", "1", "TAB", 1, "PO", "ppi", 31),
    _d("vitamin_k", "Phytonadione", "10 mg/mL Ampule", "AMP", "10", "mg", "1", "mL", 1, "IV", "reversal", 32),
    _d("prednisone", "PredniSONE", "20 mg Tablet", "TABLET", "40", "mg", "2", "TAB", 1, "PO", "steroid", 33),
    _d("albuterol", "Albuterol 0.083% Neb Soln", "2.5mg/3mL Vial", "VIAL",
       "1", "NEB", "1", "VIAL", 6, "IH", "bronchodilator", 34),
    _d("ipratropium", "Ipratropium Bromide Neb", "0.5mg/2.5mL Vial", "VIAL",
       "1", "NEB", "1", "VIAL", 4, "IH", "bronchodilator", 35),
    _d("acetaminophen", "Acetaminophen", "325 mg Tablet", "TABLET", "650", "mg", "2", "TAB", 4, "PO", "analgesic", 36),
    _d("ondansetron", "Ondansetron", "2 mg/mL - 2 mL Vial", "VIAL", "4", "mg", "2", "mL", 3, "IV", "antiemetic", 37),
    _d("nitroglycerin", "Nitroglycerin SL", "0.4 mg SL Tablet", "TABLET",
       "0.4", "mg", "1", "TAB", 3, "SL", "nitrate", 38),
    _d("docusate", "Docusate Sodium", "100 mg Capsule", "CAPSULE", "100", "mg", "1", "CAP", 2, "PO", "laxative", 39),
    _d("senna", "Senna", "8.6 mg Tablet", "TABLET", "8.6", "mg", "1", "TAB", 2, "PO", "laxative", 40),
    _d("tiotropium", "Tiotropium Bromide", "18 mcg Cap", "CAP", "1", "CAP", "1", "CAP", 1, "IH", "bronchodilator", 41),
    _d("levofloxacin", "Levofloxacin", "750 mg Tablet", "TABLET", "750", "mg", "1", "TAB", 1, "PO", "antibiotic", 43),
    _d("linezolid", "Linezolid", "600 mg Tablet", "TABLET", "600", "mg", "1", "TAB", 2, "PO", "antibiotic", 44),
    _d("doxycycline", "Doxycycline Hyclate", "100 mg Capsule", "CAPSULE",
       "100", "mg", "1", "CAP", 2, "PO", "antibiotic", 45),
    _d("levothyroxine", "Levothyroxine Sodium", "50 mcg Tablet", "TABLET",
       "50", "mcg", "1", "TAB", 1, "PO", "thyroid", 42),
    _d("calcium_gluconate", "Calcium Gluconate", "1 g / 50 mL Bag", "BAG",
       "1", "g", "1", "BAG", 1, "IV", "electrolyte", 46),
    _d("dextrose50", "Dextrose 50%", "25 g / 50 mL Syringe", "SYRINGE", "25", "gm", "1", "SYR", 1, "IV", "fluid", 47),
)
# fmt: on
DRUGS: dict[str, Drug] = {d.key: d for d in _ROWS}
