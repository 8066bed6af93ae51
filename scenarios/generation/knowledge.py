"""The small clinical knowledge the rules backend reasons with (EN + ZH), kept as data.

Every numeric constant here ends up declared in a turn's derivations when an answer uses it, so
the numeric-grounding gate can tell a knowledge threshold from a hallucinated number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DrugLab:
    drug: str  # search code, lower case
    lab: str  # lab label as charted
    direction: str  # "high": harm when above the threshold; "low": harm when below
    threshold: float
    unit: str
    risk_en: str
    risk_zh: str
    action_en: str
    action_zh: str
    avoid_en: str  # what must not be recommended when the threshold is crossed
    avoid_zh: str
    holdable: bool = True  # crossing the threshold means holding the drug (not for insulin, loop diuretics)


DRUG_LABS: tuple[DrugLab, ...] = (
    DrugLab(
        "warfarin",
        "INR(PT)",
        "high",
        3.0,
        "",
        "bleeding",
        "出血",
        "hold or reduce warfarin",
        "暂停或减量华法林",
        "increase the warfarin dose",
        "增加华法林剂量",
    ),
    DrugLab(
        "apixaban",
        "Creatinine",
        "high",
        1.5,
        "mg/dL",
        "drug accumulation and bleeding",
        "药物蓄积和出血",
        "review the apixaban dose against the dose-reduction criteria",
        "按减量标准复核阿哌沙班剂量",
        "increase the apixaban dose",
        "增加阿哌沙班剂量",
        holdable=False,
    ),
    DrugLab(
        "heparin",
        "PTT",
        "high",
        100.0,
        "sec",
        "bleeding",
        "出血",
        "pause the heparin infusion per protocol",
        "按方案暂停肝素输注",
        "increase the heparin rate",
        "上调肝素输注速度",
    ),
    DrugLab(
        "lisinopril",
        "Potassium",
        "high",
        5.0,
        "mEq/L",
        "hyperkalemia",
        "高钾血症",
        "hold lisinopril and recheck potassium",
        "暂停赖诺普利并复查血钾",
        "add potassium chloride",
        "补充氯化钾",
    ),
    DrugLab(
        "spironolactone",
        "Potassium",
        "high",
        5.0,
        "mEq/L",
        "hyperkalemia",
        "高钾血症",
        "hold spironolactone and recheck potassium",
        "暂停螺内酯并复查血钾",
        "add potassium chloride",
        "补充氯化钾",
    ),
    DrugLab(
        "furosemide",
        "Potassium",
        "low",
        3.5,
        "mEq/L",
        "hypokalemia",
        "低钾血症",
        "replete potassium and recheck",
        "补钾并复查",
        "stop potassium monitoring",
        "停止监测血钾",
        holdable=False,
    ),
    DrugLab(
        "vancomycin",
        "Creatinine",
        "high",
        1.5,
        "mg/dL",
        "nephrotoxicity",
        "肾毒性",
        "check a vancomycin trough and adjust the dose",
        "监测万古霉素谷浓度并调整剂量",
        "increase the vancomycin dose",
        "增加万古霉素剂量",
        holdable=False,
    ),
    DrugLab(
        "insulin",
        "Glucose",
        "high",
        180.0,
        "mg/dL",
        "hyperglycemia",
        "高血糖",
        "adjust the insulin regimen",
        "调整胰岛素方案",
        "stop insulin",
        "停用胰岛素",
        holdable=False,
    ),
)


@dataclass(frozen=True)
class Interaction:
    key: str
    drugs: tuple[str, str]  # search codes
    lab: str
    risk_en: str
    risk_zh: str
    action_en: str
    action_zh: str
    avoid_en: str
    avoid_zh: str


INTERACTIONS: tuple[Interaction, ...] = (
    Interaction(
        "ace_mra",
        ("lisinopril", "spironolactone"),
        "Potassium",
        "additive hyperkalemia risk",
        "高钾血症风险叠加",
        "monitor potassium closely and hold one agent if potassium rises",
        "密切监测血钾，血钾升高时暂停其中一种药物",
        "potassium supplements",
        "补钾制剂",
    ),
    Interaction(
        "vanc_pip",
        ("vancomycin", "piperacillin"),
        "Creatinine",
        "increased acute kidney injury risk",
        "急性肾损伤风险增加",
        "monitor creatinine daily and consider an alternative beta-lactam",
        "每日监测肌酐并考虑更换β-内酰胺类药物",
        "adding another nephrotoxic drug",
        "加用其他肾毒性药物",
    ),
    Interaction(
        "dapt",
        ("aspirin", "clopidogrel"),
        "Hemoglobin",
        "increased bleeding risk",
        "出血风险增加",
        "monitor hemoglobin and consider gastroprotection",
        "监测血红蛋白并考虑胃黏膜保护",
        "adding an NSAID",
        "加用非甾体抗炎药",
    ),
    Interaction(
        "heparin_aspirin",
        ("heparin", "aspirin"),
        "Platelet Count",
        "increased bleeding risk",
        "出血风险增加",
        "monitor platelets and hemoglobin",
        "监测血小板和血红蛋白",
        "adding an NSAID",
        "加用非甾体抗炎药",
    ),
)

# Renally cleared drugs whose dosing depends on Cockcroft-Gault creatinine clearance.
RENAL_DRUGS: dict[str, tuple[float, str, str]] = {
    # drug: (CrCl threshold mL/min, action EN, action ZH)
    "apixaban": (25.0, "apixaban needs dose review when CrCl is low", "肌酐清除率低时需复核阿哌沙班剂量"),
    "vancomycin": (50.0, "vancomycin dosing interval should be extended", "应延长万古霉素给药间隔"),
    "metformin": (30.0, "metformin is contraindicated", "禁用二甲双胍"),
    "enoxaparin": (30.0, "enoxaparin dose should be reduced", "应减少依诺肝素剂量"),
}

# Labs looked at together with a focus lab (parallel data gathering).
RELATED_LABS: dict[str, tuple[str, ...]] = {
    "INR(PT)": ("Hemoglobin", "Platelet Count"),
    "Creatinine": ("Urea Nitrogen", "Potassium"),
    "Potassium": ("Creatinine", "Bicarbonate"),
    "Glucose": ("Bicarbonate", "Anion Gap"),
    "PTT": ("Hemoglobin", "Platelet Count"),
    "Hemoglobin": ("Platelet Count", "INR(PT)"),
    "Platelet Count": ("Hemoglobin", "WBC"),
    "WBC": ("Lactate", "Creatinine"),
    "Vancomycin": ("Creatinine", "WBC"),
}
# Labs the diagnostic work-up prefers as the focus, in order.
WORKUP_LABS = ("Creatinine", "Potassium", "Glucose", "INR(PT)", "Hemoglobin", "WBC", "Troponin T", "Sodium")

# Cockcroft-Gault constants (declared in the derivation of every answer that uses them).
CG_AGE_BASE = 140.0
CG_DIVISOR = 72.0
CG_FEMALE = 0.85


def drug_lab(*, drug: str) -> DrugLab | None:
    key = drug.lower()
    return next((d for d in DRUG_LABS if d.drug in key), None)


def interaction(*, key: str) -> Interaction:
    return next(i for i in INTERACTIONS if i.key == key)


def renal_rule(*, drug: str) -> tuple[float, str, str] | None:
    key = drug.lower()
    return next((v for k, v in RENAL_DRUGS.items() if k in key), None)
