"""Clinical Reasoning turns: fetched values + knowledge. Every computed number is declared as a Derivation.

This module holds the turns that read lab results against what is known about them and the
patient's drugs (reference range, trend, drug safety threshold, interaction); the kidney-function
turns (Cockcroft-Gault clearance, renal dosing), which compute a creatinine clearance first, are
:mod:`scenarios.generation.turns_renal`. ``EMPTY`` is what any of them answers when the record has
nothing to reason from."""

from __future__ import annotations

from scenarios.generation import knowledge as kb
from scenarios.generation.common import (
    Built,
    LabPoint,
    TurnContext,
    fmt,
    item,
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


__all__ = ["EMPTY", "cr_interaction", "cr_ref_range", "cr_threshold", "cr_trend", "resources"]
