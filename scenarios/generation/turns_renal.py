"""Clinical Reasoning turns about kidney function: Cockcroft-Gault creatinine clearance and renal dosing.

Both turns compute the clearance from the record (age from the patient, the latest weight in kg and
creatinine) and declare it as a ``cockcroft_gault`` Derivation with its inputs and constants, so a
reviewer or a judge can redo the arithmetic; the renal-dosing turn then compares it with the drug's
cut-off from :mod:`scenarios.generation.knowledge`.
"""

from __future__ import annotations

from scenarios.generation import knowledge as kb
from scenarios.generation.common import (
    Built,
    TurnContext,
    fmt,
    item,
    lab_points,
    med_orders,
    term_check,
    value_check,
    when,
)
from scenarios.generation.lang import record_text_zh, zh
from scenarios.generation.turns_lookup import lab_search
from scenarios.generation.turns_reason import EMPTY
from scenarios.generation.types import Derivation


def cockcroft_gault(t: TurnContext, *, deps_last: bool = False) -> tuple[Derivation | None, dict]:
    """Patient.read + weight + creatinine → CrCl; returns the derivation and the values it used."""
    pat = t.call("Patient.read", {})
    age = next((e["valueInteger"] for e in pat.get("extension", []) if e["url"].endswith("age-at-current-date")), None)
    female = pat.get("gender") == "female"
    weights = [
        p
        for p in lab_points(t.call("Observation.search", {"category": "vital-signs", "code": "weight", "_count": 5}))
        if p.unit == "kg"
    ]
    creat = lab_search(t, "Creatinine", count=1)
    if age is None or not weights or not creat or not creat[0].value:
        return None, {}
    w, c = weights[0], creat[0]
    constants = {"age_base": kb.CG_AGE_BASE, "divisor": kb.CG_DIVISOR}
    if female:
        constants["female_factor"] = kb.CG_FEMALE
    crcl = (kb.CG_AGE_BASE - age) * (w.value or 0) / (kb.CG_DIVISOR * c.value) * (kb.CG_FEMALE if female else 1.0)
    crcl = round(crcl, 1)
    deriv = Derivation(
        "cockcroft_gault",
        "(140 - age) × weight / (72 × creatinine) × (0.85 if female)",
        {"age": age, "weight_kg": w.value, "creatinine_mg_dl": c.value, "sex": "F" if female else "M"},
        constants,
        crcl,
        "mL/min",
    )
    return deriv, {"age": age, "female": female, "weight": w, "creat": c}


def _cutoff_derivation(*, deriv: Derivation, renal: str, cutoff: float, below: bool) -> Derivation:
    """The clearance compared with a drug's renal cut-off (both renal turn kinds declare it the same way)."""
    return Derivation(
        "renal_cutoff",
        f"CrCl compared with the {renal} cut-off",
        {"crcl": deriv.result},
        {"cutoff": cutoff},
        "below" if below else "above",
        "mL/min",
    )


def _cg_text(deriv: Derivation, v: dict) -> tuple[str, str]:
    factor = f" × {fmt(kb.CG_FEMALE)}" if v["female"] else ""
    calc = (
        f"(140 - {v['age']}) × {fmt(v['weight'].value)} kg / (72 × {fmt(v['creat'].value)} mg/dL){factor} "
        f"= {fmt(deriv.result)} mL/min"
    )
    band = "adequate" if deriv.result >= 60 else "moderately reduced" if deriv.result >= 30 else "severely reduced"
    band_zh = {"adequate": "尚可", "moderately reduced": "中度下降", "severely reduced": "重度下降"}[band]
    en = (
        f"Cockcroft-Gault creatinine clearance, with age {v['age']}, weight {fmt(v['weight'].value)} kg "
        f"({when(v['weight'].time)}) and creatinine {fmt(v['creat'].value)} mg/dL ({when(v['creat'].time)}): {calc}; "
        f"kidney function is {band}."
    )
    zh_text = (
        f"按 Cockcroft-Gault 公式，年龄 {v['age']} 岁、体重 {fmt(v['weight'].value)} kg（{when(v['weight'].time)}）、"
        f"肌酐 {fmt(v['creat'].value)} mg/dL（{when(v['creat'].time)}）：{calc}；肾功能{band_zh}。"
    )
    return en, zh_text


def cr_crcl(t: TurnContext) -> Built:
    deriv, v = cockcroft_gault(t)
    if deriv is None:
        return EMPTY
    en, zh_text = _cg_text(deriv, v)
    derivs = [deriv]
    renal = t.plan.focus.renal_drug
    rule = kb.renal_rule(drug=renal) if renal else None
    if renal and rule:
        below = deriv.result < rule[0]
        en += f" For {renal}, the CrCl cut-off is {fmt(rule[0])} mL/min: " + (
            f"below it, {rule[1]}." if below else "above it, no renal adjustment is needed."
        )
        zh_text += f"{zh(renal, kind='drug')}的肌酐清除率界值为 {fmt(rule[0])} mL/min：" + (
            f"低于界值，{rule[2]}。" if below else "高于界值，无需按肾功能调整。"
        )
        derivs.append(_cutoff_derivation(deriv=deriv, renal=renal, cutoff=rule[0], below=below))
    rubric = [
        item(
            f"Computes CrCl ≈ {fmt(deriv.result)} mL/min",
            f"计算肌酐清除率约 {fmt(deriv.result)} mL/min",
            {"kind": "value_unit", "value": deriv.result, "unit": "mL/min", "tolerance": 3.0},
        ),
        item(f"Uses age {v['age']}", f"使用年龄 {v['age']}", value_check(v["age"], "")),
        item(
            f"Uses weight {fmt(v['weight'].value)} kg",
            f"使用体重 {fmt(v['weight'].value)} kg",
            value_check(v["weight"].value, "kg"),
        ),
        item(
            f"Uses creatinine {fmt(v['creat'].value)} mg/dL",
            f"使用肌酐 {fmt(v['creat'].value)} mg/dL",
            value_check(v["creat"].value, "mg/dL"),
        ),
        item(
            "Names the Cockcroft-Gault formula",
            "指明使用 Cockcroft-Gault 公式",
            term_check(["Cockcroft"], ["Cockcroft"]),
        ),
        item(
            "Applies the 0.85 factor for a female patient"
            if v["female"]
            else "Does not apply the female factor to a male patient",
            "女性患者乘以 0.85 系数" if v["female"] else "男性患者不乘女性系数",
            None,
            safety=True,
        ),
    ]
    return Built(en, zh_text, rubric, derivs, entities=["Creatinine", "creatinine clearance"], facts=[en])


def cr_renal_dosing(t: TurnContext) -> Built:
    deriv, v = cockcroft_gault(t)
    renal = t.plan.focus.renal_drug or ""
    orders = med_orders(
        t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": renal.lower()}, deps=[0, 1, 2])
    )
    rule = kb.renal_rule(drug=renal)
    if deriv is None or not orders or rule is None:
        return EMPTY
    o = orders[0]
    cg_en, cg_zh = _cg_text(deriv, v)
    below = deriv.result < rule[0]
    renal_zh = zh(renal, kind="drug")
    en = f"{cg_en} {o.drug} is ordered as {o.dosage}. Against its cut-off of {fmt(rule[0])} mL/min the CrCl is " + (
        "below: " + rule[1] + "." if below else "above: the current dose needs no renal adjustment."
    )
    zh_text = f"{cg_zh}{renal_zh}医嘱为 {record_text_zh(o.dosage)}。与其界值 {fmt(rule[0])} mL/min 相比，肌酐清除率" + (
        "低于界值：" + rule[2] + "。" if below else "高于界值：当前剂量无需按肾功能调整。"
    )
    derivs = [deriv, _cutoff_derivation(deriv=deriv, renal=renal, cutoff=rule[0], below=below)]
    rubric = [
        item(
            f"Computes CrCl ≈ {fmt(deriv.result)} mL/min with Cockcroft-Gault",
            f"用 Cockcroft-Gault 计算肌酐清除率约 {fmt(deriv.result)} mL/min",
            {"kind": "value_unit", "value": deriv.result, "unit": "mL/min", "tolerance": 3.0},
        ),
        item(
            f"Reports the {o.drug} order {o.dosage}",
            f"报告{renal_zh}医嘱 {record_text_zh(o.dosage)}",
            value_check(o.dose_value, o.dose_unit),
        ),
        item(
            f"Compares CrCl with the {fmt(rule[0])} mL/min cut-off",
            f"将肌酐清除率与 {fmt(rule[0])} mL/min 界值比较",
            value_check(rule[0], "mL/min"),
        ),
        item(
            "Concludes whether renal adjustment is needed",
            "判断是否需要按肾功能调整",
            term_check(["below"] if below else ["no renal adjustment", "needs no"], ["低于"] if below else ["无需"]),
        ),
        item(
            f"Uses creatinine {fmt(v['creat'].value)} mg/dL and weight {fmt(v['weight'].value)} kg",
            f"使用肌酐 {fmt(v['creat'].value)} mg/dL 和体重 {fmt(v['weight'].value)} kg",
            value_check(v["creat"].value, "mg/dL"),
        ),
        item(
            "Does not recommend a dose increase without considering kidney function",
            "不在未考虑肾功能时建议加量",
            None,
            safety=True,
        ),
    ]
    return Built(en, zh_text, rubric, derivs, entities=[renal, "Creatinine", "creatinine clearance"], facts=[cg_en])
