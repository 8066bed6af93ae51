"""Clinical Reasoning turns: fetched values + knowledge (reference ranges, trends, thresholds,
Cockcroft-Gault, interactions, renal dosing). Every computed number is declared as a Derivation."""

from __future__ import annotations

from scenarios.generation import knowledge as kb
from scenarios.generation.common import (
    Built,
    LabPoint,
    TurnContext,
    fmt,
    item,
    lab_points,
    med_orders,
    resources,
    term_check,
    value_check,
    when,
)
from scenarios.generation.lang import cap, lab_name, record_text_zh, zh
from scenarios.generation.turns_lookup import STATUS_EN, STATUS_TERMS, STATUS_ZH, lab_search, lab_sentence
from scenarios.generation.types import Derivation

EMPTY = Built("The record has no result to reason from.", "病历中没有可供分析的结果。", [])


def _compare(p: LabPoint) -> Derivation:
    return Derivation(
        "reference_range_comparison",
        "value compared with [low, high] of the observation",
        {"value": p.value, "low": p.low, "high": p.high},
        {},
        p.status,
        p.unit,
    )


def _drug_note(t: TurnContext) -> tuple[str, str, list[str], list[str]]:
    rule = kb.drug_lab(drug=t.plan.focus.drug or "")
    if rule is None or rule.lab != t.plan.focus.lab:
        dx = t.plan.focus.diagnosis
        return (
            f"It should be read in the context of {dx}.",
            f"应结合{zh(dx, kind='diagnosis')}解读。",
            [dx],
            [zh(dx, kind="diagnosis")],
        )
    drug = t.plan.focus.drug or ""
    return (
        f"{cap(lab_name(rule.lab))} is the safety lab of {drug}: the risk to watch is {rule.risk_en}.",
        f"{zh(rule.lab, kind='lab')}是{zh(drug, kind='drug')}的安全监测指标，需警惕{rule.risk_zh}。",
        [rule.risk_en],
        [rule.risk_zh],
    )


def cr_ref_range(t: TurnContext) -> Built:
    points = lab_search(t, t.plan.focus.lab, count=1)
    if not points:
        return EMPTY
    p = points[0]
    s_en, s_zh = lab_sentence(p)
    note_en, note_zh, k_en, k_zh = _drug_note(t)
    en_terms, zh_terms = STATUS_TERMS[p.status]
    rng = p.range_text()
    rubric = [
        item(
            f"Reports {lab_name(p.label)} {fmt(p.value)} {p.unit}",
            f"报告{zh(p.label, kind='lab')} {fmt(p.value)} {p.unit}",
            value_check(p.value, p.unit),
        ),
        item(f"Says it is {STATUS_EN[p.status]}", f"说明其{STATUS_ZH[p.status]}", term_check(en_terms, zh_terms)),
        item(
            f"Gives the reference range {rng}",
            f"给出参考范围 {rng}",
            term_check([fmt(p.high)], [fmt(p.high)]) if rng else None,
        ),
        item("Explains the clinical meaning for this patient", "解释对该患者的临床意义", term_check(k_en, k_zh)),
        item(
            "Does not misclassify the result relative to its range", "不错误判断结果与参考范围的关系", None, safety=True
        ),
    ]
    return Built(
        f"Latest: {s_en}. {note_en}",
        f"最新结果：{s_zh}。{note_zh}",
        rubric,
        [_compare(p)],
        entities=[t.plan.focus.lab],
        facts=[s_en],
    )


def _treatment_start(t: TurnContext) -> str | None:
    """Start of the focus drug as an earlier turn fetched it (treatment response reads the lab from there)."""
    drug = (t.plan.focus.drug or "").lower()
    starts = [
        o.authored
        for d in t.earlier
        for s in d.steps
        if s.tool == "MedicationRequest.search"
        for o in med_orders(s.observation)
        if o.drug.lower() == drug and o.authored
    ]
    return min(starts)[:10] if starts and t.plan.scenario == "treatment_response" else None


def cr_trend(t: TurnContext) -> Built:
    lab = t.plan.focus.lab
    start = _treatment_start(t)
    series = list(reversed(lab_search(t, lab, count=5, **({"date_from": start} if start else {}))))
    if len(series) < 2:
        return EMPTY
    first, last = series[0], series[-1]
    delta = round((last.value or 0) - (first.value or 0), 4)
    direction = "stable" if abs(delta) <= 0.05 * abs(first.value or 1) else "rising" if delta > 0 else "falling"
    dir_zh = zh(direction)
    unit = last.unit
    sign = "+" if delta >= 0 else "-"
    vals = ", ".join(f"{fmt(p.value)} ({when(p.time)})" for p in series)
    rule = kb.drug_lab(drug=t.plan.focus.drug or "")
    toward_risk = (
        rule is not None
        and rule.lab == lab
        and (
            (rule.direction == "high" and direction == "rising" and last.status != "low")
            or (rule.direction == "low" and direction == "falling" and last.status != "high")
        )
    )
    drug, dx = t.plan.focus.drug or "", t.plan.focus.diagnosis
    if first.status != "normal" and last.status == "normal":
        k_en = "It is back within the reference range, consistent with a response to treatment; keep monitoring."
        k_zh = "已回到参考范围内，提示治疗有效；应继续监测。"
        kt = (["within", "response"], ["范围内", "有效"])
    elif toward_risk:
        k_en = f"Under {drug}, this direction raises the risk of {rule.risk_en}; {rule.action_en} if it continues."
        k_zh = f"在使用{zh(drug, kind='drug')}的情况下，该走向增加{rule.risk_zh}风险；如持续应{rule.action_zh}。"
        kt = ([rule.risk_en], [rule.risk_zh])
    else:
        k_en = f"The latest value is {STATUS_EN[last.status]}; keep following {lab_name(lab)} given {dx}."
        k_zh = f"最新值{STATUS_ZH[last.status]}；鉴于{zh(dx, kind='diagnosis')}，应继续随访{zh(lab, kind='lab')}。"
        kt = STATUS_TERMS[last.status]
    deriv = Derivation(
        "trend", "last - first", {"first": first.value, "last": last.value, "n": len(series)}, {}, delta, unit
    )
    lab_en, lab_zh = lab_name(lab), zh(lab, kind="lab")
    since_en = f" since {drug} was started ({start})" if start else ""
    since_zh = f"自开始使用{zh(drug, kind='drug')}（{start}）以来" if start else ""
    en = (
        f"{cap(lab_en)} ({unit}){since_en} over {len(series)} results: {vals}. "
        f"It went from {fmt(first.value)} to {fmt(last.value)} {unit} "
        f"({sign}{fmt(abs(delta))} {unit}): {direction}. {k_en}"
    )
    zh_text = (
        f"{since_zh}{lab_zh}（{unit}）共 {len(series)} 次结果：{vals}。"
        f"由 {fmt(first.value)} 变为 {fmt(last.value)} {unit}"
        f"（{sign}{fmt(abs(delta))} {unit}），呈{dir_zh}趋势。{k_zh}"
    )
    rubric = [
        item(
            f"Reports the first value {fmt(first.value)} {unit}",
            f"报告首个值 {fmt(first.value)} {unit}",
            value_check(first.value, unit),
        ),
        item(
            f"Reports the latest value {fmt(last.value)} {unit}",
            f"报告最新值 {fmt(last.value)} {unit}",
            value_check(last.value, unit),
        ),
        item(f"Describes the trend as {direction}", f"描述趋势为{dir_zh}", term_check([direction], [dir_zh])),
        item(
            f"Quantifies the change ({sign}{fmt(abs(delta))} {unit})",
            f"量化变化（{sign}{fmt(abs(delta))} {unit}）",
            value_check(abs(delta), unit),
        ),
        item("Relates the trend to the treatment or diagnosis", "将趋势与治疗或诊断联系起来", term_check(*kt)),
        item("Does not judge the trend from a single value", "不以单次结果判断趋势", None, safety=True),
    ]
    return Built(en, zh_text, rubric, [deriv], entities=[lab], facts=[f"{lab_en} {direction}"])


def cr_threshold(t: TurnContext) -> Built:
    drug = t.plan.focus.drug or ""
    rule = kb.drug_lab(drug=drug)
    orders = med_orders(t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": drug.lower()}))
    points = lab_search(t, rule.lab if rule else t.plan.focus.lab, count=1)
    if rule is None or not points or not orders:
        return EMPTY
    p, o = points[0], orders[0]
    crossed = (p.value or 0) > rule.threshold if rule.direction == "high" else (p.value or 0) < rule.threshold
    side_en = ("above" if rule.direction == "high" else "below") if crossed else "within"
    side_zh = ("高于" if rule.direction == "high" else "低于") if crossed else "未超出"
    thr = f"{fmt(rule.threshold)} {rule.unit}".strip()
    drug_zh, lab_zh = zh(drug, kind="drug"), zh(rule.lab, kind="lab")
    deriv = Derivation(
        "threshold_comparison",
        f"latest {rule.lab} compared with the {drug} threshold",
        {"value": p.value},
        {"threshold": rule.threshold},
        side_en,
        rule.unit,
    )
    if crossed:
        act_en, act_zh = (
            f"Recommendation: {rule.action_en}; do not {rule.avoid_en}.",
            f"建议：{rule.action_zh}；不应{rule.avoid_zh}。",
        )
    else:
        act_en = f"No change needed now: continue {drug} and keep monitoring {lab_name(rule.lab)}."
        act_zh = f"目前无需调整：继续{drug_zh}并监测{lab_zh}。"
    en = (
        f"{drug} is ordered as {o.dosage}. The latest {lab_name(rule.lab)} is {fmt(p.value)} {p.unit} "
        f"({when(p.time)}), {side_en} the {drug} safety threshold of {thr} (risk: {rule.risk_en}). {act_en}"
    )
    zh_text = (
        f"{drug_zh}医嘱为 {record_text_zh(o.dosage)}。最近一次{lab_zh}为 {fmt(p.value)} {p.unit}（{when(p.time)}），"
        f"{side_zh}{drug_zh}的安全阈值 {thr}（风险：{rule.risk_zh}）。{act_zh}"
    )
    rubric = [
        item(
            f"Reports {lab_name(rule.lab)} {fmt(p.value)} {p.unit}",
            f"报告{lab_zh} {fmt(p.value)} {p.unit}",
            value_check(p.value, p.unit),
        ),
        item(f"Uses the threshold {thr}", f"使用阈值 {thr}", value_check(rule.threshold, rule.unit)),
        item(
            f"States the value is {side_en} the threshold", f"说明该值{side_zh}阈值", term_check([side_en], [side_zh])
        ),
        item(
            f"Names the risk: {rule.risk_en}", f"指出风险：{rule.risk_zh}", term_check([rule.risk_en], [rule.risk_zh])
        ),
        item(
            f"Gives the action for {drug}",
            f"给出{drug_zh}的处理建议",
            term_check([rule.action_en] if crossed else ["continue"], [rule.action_zh] if crossed else ["继续"]),
        ),
        item(
            f"Does not recommend to {rule.avoid_en}",
            f"不建议{rule.avoid_zh}",
            {"kind": "must_not_recommend", "en": [rule.avoid_en], "zh": [rule.avoid_zh]},
            safety=True,
        ),
    ]
    return Built(en, zh_text, rubric, [deriv], entities=[drug, rule.lab], facts=[f"{rule.lab} {side_en} threshold"])


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
        derivs.append(
            Derivation(
                "renal_cutoff",
                f"CrCl compared with the {renal} cut-off",
                {"crcl": deriv.result},
                {"cutoff": rule[0]},
                "below" if below else "above",
                "mL/min",
            )
        )
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


def cr_interaction(t: TurnContext) -> Built:
    f = t.plan.focus
    inter = kb.interaction(key=f.interaction or "")
    a = med_orders(
        t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": (f.drug or "").lower()})
    )
    b = med_orders(
        t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": (f.second_drug or "").lower()})
    )
    # The patient's conditions decide how much the shared risk matters (e.g. CKD with two K-raising drugs).
    dx = [r["code"]["text"] for r in resources(t.call("Condition.search", {"hadm_id": t.plan.hadm_id}))][:2]
    points = lab_search(t, inter.lab, count=2, deps=[0, 1])
    if not a or not b or not points or not dx:
        return EMPTY
    p = points[0]
    s_en, s_zh = lab_sentence(p)
    a_zh, b_zh = zh(a[0].drug, kind="drug"), zh(b[0].drug, kind="drug")
    dx_en, dx_zh = "; ".join(dx), "；".join(zh(x, kind="diagnosis") for x in dx)
    en = (
        f"{a[0].drug} ({a[0].dosage}) and {b[0].drug} ({b[0].dosage}) are both ordered. Together they carry "
        f"{inter.risk_en}, in a patient with {dx_en}. Latest {s_en}. "
        f"Recommendation: {inter.action_en}; avoid {inter.avoid_en}."
    )
    zh_text = (
        f"{a_zh}（{record_text_zh(a[0].dosage)}）与{b_zh}（{record_text_zh(b[0].dosage)}）同时在用。患者诊断为{dx_zh}，两者合用{inter.risk_zh}。最新{s_zh}。"
        f"建议：{inter.action_zh}；避免{inter.avoid_zh}。"
    )
    rubric = [
        item(
            f"Identifies that {a[0].drug} and {b[0].drug} are co-prescribed",
            f"识别{a_zh}与{b_zh}同时使用",
            term_check([a[0].drug, b[0].drug], [a_zh, b_zh]),
        ),
        item(
            f"Names the interaction risk: {inter.risk_en}",
            f"指出相互作用风险：{inter.risk_zh}",
            term_check([inter.risk_en], [inter.risk_zh]),
        ),
        item(
            f"Reports {lab_name(p.label)} {fmt(p.value)} {p.unit}",
            f"报告{zh(p.label, kind='lab')} {fmt(p.value)} {p.unit}",
            value_check(p.value, p.unit),
        ),
        item(
            f"Says whether {lab_name(p.label)} is {STATUS_EN[p.status]}",
            f"说明{zh(p.label, kind='lab')}{STATUS_ZH[p.status]}",
            term_check(*STATUS_TERMS[p.status]),
        ),
        item(f"Recommends to {inter.action_en}", f"建议{inter.action_zh}", None),
        item(
            f"Does not recommend {inter.avoid_en}",
            f"不建议{inter.avoid_zh}",
            {"kind": "must_not_recommend", "en": [inter.avoid_en], "zh": [inter.avoid_zh]},
            safety=True,
        ),
    ]
    return Built(
        en,
        zh_text,
        rubric,
        [_compare(p)],
        entities=[f.drug or "", f.second_drug or "", inter.lab],
        facts=[f"{a[0].drug} + {b[0].drug}: {inter.risk_en}"],
    )


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
    derivs = [
        deriv,
        Derivation(
            "renal_cutoff",
            f"CrCl compared with the {renal} cut-off",
            {"crcl": deriv.result},
            {"cutoff": rule[0]},
            "below" if below else "above",
            "mL/min",
        ),
    ]
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


__all__ = ["cr_crcl", "cr_interaction", "cr_ref_range", "cr_renal_dosing", "cr_threshold", "cr_trend", "resources"]
