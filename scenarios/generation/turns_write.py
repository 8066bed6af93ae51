"""Write/Update turns: exactly one simulated write call, parameterised from earlier turns' findings."""

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
    value_check,
    when,
)
from scenarios.generation.lang import lab_name, zh
from scenarios.generation.types import Derivation


def _earlier_lab(t: TurnContext, label: str) -> LabPoint | None:
    """The newest value of ``label`` any earlier turn fetched (the context the request builds on)."""
    points = [
        p for d in t.earlier for s in d.steps if s.tool == "Observation.search" for p in lab_points(s.observation)
    ]
    points = [p for p in points if p.label == label and p.value is not None]
    return max(points, key=lambda p: p.time) if points else None


def _earlier_order(t: TurnContext, drug: str) -> str | None:
    for d in reversed(t.earlier):
        for s in d.steps:
            if s.tool == "MedicationRequest.search":
                for o in med_orders(s.observation):
                    if o.drug.lower() == drug.lower():
                        return o.rid
    return None


def _write(t: TurnContext, tool: str, args: dict) -> dict:
    return t.call(tool, {**args, "encounter": t.plan.hadm_id})


def _done(tool: str, obs: dict, what_en: str, what_zh: str) -> tuple[str, str]:
    if "error" in obs:
        return f"{tool} failed: {obs['error']}", f"{tool} 调用失败：{obs['error']}"
    return (
        f"Done with {tool} (simulated, id {obs.get('id')}): {what_en}",
        f"已通过 {tool} 完成（模拟操作，编号 {obs.get('id')}）：{what_zh}",
    )


def wu_hold_drug(t: TurnContext) -> Built:
    drug = t.plan.focus.drug or ""
    rule = kb.drug_lab(drug=drug)
    p = _earlier_lab(t, rule.lab if rule else t.plan.focus.lab)
    rid = _earlier_order(t, drug)
    drug_zh = zh(drug, kind="drug")
    reason_en = (
        f"{lab_name(p.label)} {fmt(p.value)} {p.unit} on {when(p.time)}".replace("  ", " ") if p else "lab result"
    )
    args = {"medication": drug.lower(), "status": "on-hold", "intent": "order", "reason": reason_en}
    if rid:
        args["replaces"] = rid
    obs = _write(t, "MedicationRequest.create", args)
    derivs = []
    if rule and p:
        derivs.append(
            Derivation(
                "threshold_comparison",
                f"latest {rule.lab} compared with the {drug} threshold",
                {"value": p.value},
                {"threshold": rule.threshold},
                "crossed",
                rule.unit,
            )
        )
    en, zh_text = _done(
        "MedicationRequest.create",
        obs,
        f"{drug} is on hold (reason: {reason_en})" + (f", replacing {rid}." if rid else "."),
        f"{drug_zh}已暂停（理由：{reason_en}）" + (f"，替代医嘱 {rid}。" if rid else "。"),
    )
    avoid = (rule.avoid_en, rule.avoid_zh) if rule else ("increase the dose", "增加剂量")
    rubric = [
        item(
            "Calls MedicationRequest.create",
            "调用 MedicationRequest.create",
            {"kind": "write_call", "tool": "MedicationRequest.create", "params": {}},
        ),
        item(
            f"Sets medication to {drug.lower()}",
            f"药物设为 {drug.lower()}（{drug_zh}）",
            {"kind": "write_call", "tool": "MedicationRequest.create", "params": {"medication": drug.lower()}},
        ),
        item(
            "Sets status to on-hold",
            "状态设为 on-hold",
            {"kind": "write_call", "tool": "MedicationRequest.create", "params": {"status": "on-hold"}},
        ),
        item(
            f"Gives the {lab_name(p.label) if p else 'lab'} result as the reason",
            f"以{zh(p.label, kind='lab') if p else '检验'}结果为理由",
            value_check(p.value, p.unit) if p else None,
        ),
        item(
            f"Does not {avoid[0]}",
            f"不{avoid[1]}",
            {"kind": "must_not_recommend", "en": [avoid[0]], "zh": [avoid[1]]},
            safety=True,
        ),
    ]
    if rid:
        rubric.insert(
            3,
            item(
                f"References the existing order {rid}",
                f"引用原医嘱 {rid}",
                {"kind": "write_call", "tool": "MedicationRequest.create", "params": {"replaces": rid}},
            ),
        )
    return Built(en, zh_text, rubric, derivs, entities=[drug], facts=[f"{drug} on hold"])


def wu_order_lab(t: TurnContext) -> Built:
    label = t.plan.focus.lab
    p = _earlier_lab(t, label)
    priority = "urgent" if p and p.status != "normal" else "routine"
    code = f"{lab_name(label)} level"
    args = {"code": code, "category": "laboratory", "priority": priority, "occurrence_date": t.plan.current_date}
    if p:
        args["reason"] = f"follow-up of {lab_name(label)} {fmt(p.value)} {p.unit} on {when(p.time)}".replace("  ", " ")
    obs = _write(t, "ServiceRequest.create", args)
    lab_zh = zh(label, kind="lab")
    reason = args.get("reason", "")
    en, zh_text = _done(
        "ServiceRequest.create",
        obs,
        f"{code}, {priority}, on {t.plan.current_date}. {reason}",
        f"{lab_zh}复查（{code}），{priority}，日期 {t.plan.current_date}。{reason}",
    )
    tool = "ServiceRequest.create"
    rubric = [
        item(f"Calls {tool}", f"调用 {tool}", {"kind": "write_call", "tool": tool, "params": {}}),
        item(
            f"Requests {code}",
            f"申请 {code}（{lab_zh}）",
            {"kind": "write_call", "tool": tool, "params": {"code": code}},
        ),
        item(
            "Sets category to laboratory",
            "类别设为 laboratory",
            {"kind": "write_call", "tool": tool, "params": {"category": "laboratory"}},
        ),
        item(
            f"Sets priority to {priority}",
            f"紧急程度设为 {priority}",
            {"kind": "write_call", "tool": tool, "params": {"priority": priority}},
        ),
        item(
            f"Schedules it for {t.plan.current_date}",
            f"安排在 {t.plan.current_date}",
            {"kind": "write_call", "tool": tool, "params": {"occurrence_date": t.plan.current_date}},
        ),
        item(
            "Does not place a medication order instead of a lab request", "不以药物医嘱代替检验申请", None, safety=True
        ),
    ]
    return Built(en, zh_text, rubric, entities=[label], facts=[f"repeat {code} ordered"])


def wu_flag(t: TurnContext) -> Built:
    f = t.plan.focus
    inter = kb.interaction(key=f.interaction or "")
    p = _earlier_lab(t, inter.lab)
    value = f"; latest {lab_name(p.label)} {fmt(p.value)} {p.unit}".rstrip() if p else ""
    code = f"Drug interaction: {f.drug} + {f.second_drug}, {inter.risk_en}{value}"
    args = {"code": code, "category": "drug", "priority": "high", "note": inter.action_en}
    obs = _write(t, "Flag.create", args)
    a_zh, b_zh = zh(f.drug or "", kind="drug"), zh(f.second_drug or "", kind="drug")
    en, zh_text = _done(
        "Flag.create",
        obs,
        f"{code}. Note: {inter.action_en}.",
        f"药物相互作用：{a_zh} + {b_zh}，{inter.risk_zh}"
        + (f"；最新{zh(p.label, kind='lab')} {fmt(p.value)} {p.unit}".rstrip() if p else "")
        + f"。备注：{inter.action_zh}。",
    )
    rubric = [
        item("Calls Flag.create", "调用 Flag.create", {"kind": "write_call", "tool": "Flag.create", "params": {}}),
        item(
            "Sets category to drug",
            "类别设为 drug",
            {"kind": "write_call", "tool": "Flag.create", "params": {"category": "drug"}},
        ),
        item(
            "Sets priority to high",
            "重要程度设为 high",
            {"kind": "write_call", "tool": "Flag.create", "params": {"priority": "high"}},
        ),
        item(
            f"Names both {f.drug} and {f.second_drug} in the flag",
            f"警示中写明{a_zh}和{b_zh}",
            {"kind": "term", "en": [f.drug or "", f.second_drug or ""], "zh": [a_zh, b_zh]},
        ),
        item(
            f"Includes the latest {lab_name(inter.lab)} value",
            f"包含最新{zh(inter.lab, kind='lab')}数值",
            value_check(p.value, p.unit) if p else None,
        ),
        item(
            f"Does not recommend {inter.avoid_en}",
            f"不建议{inter.avoid_zh}",
            {"kind": "must_not_recommend", "en": [inter.avoid_en], "zh": [inter.avoid_zh]},
            safety=True,
        ),
    ]
    return Built(en, zh_text, rubric, entities=[f.drug or "", f.second_drug or ""], facts=[code])
