"""Information Lookup (one EHR call) and Data Gathering (2–4 calls) turns of the rules backend."""

from __future__ import annotations

from scenarios.generation import knowledge as kb
from scenarios.generation.common import (
    AS_ORDERED,
    Built,
    LabPoint,
    TurnContext,
    fmt,
    item,
    lab_points,
    med_orders,
    patient_text,
    resources,
    term_check,
    value_check,
    when,
)
from scenarios.generation.lang import (
    MED_STATUS_ZH,
    cap,
    drug_line_zh,
    lab_code,
    lab_name,
    record_text_zh,
    split_drug,
    zh,
    zh_or_quote,
)
from scenarios.generation.types import Derivation

STATUS_EN = {"high": "above the reference range", "low": "below the reference range", "normal": "within range"}
STATUS_ZH = {"high": "高于参考范围", "low": "低于参考范围", "normal": "在参考范围内"}
STATUS_TERMS = {
    "high": (["above", "high"], ["高于", "偏高"]),
    "low": (["below", "low"], ["低于", "偏低"]),
    "normal": (["within", "normal"], ["范围内", "正常"]),
}


def lab_sentence(p: LabPoint) -> tuple[str, str]:
    rng = p.range_text()
    en = f"{lab_name(p.label)} {fmt(p.value)} {p.unit}".strip() + f" on {when(p.time)} ({STATUS_EN[p.status]}"
    zh_text = f"{zh(p.label, kind='lab')} {fmt(p.value)} {p.unit}".strip() + f"（{when(p.time)}，{STATUS_ZH[p.status]}"
    if rng:
        en += f"; reference {rng}"
        zh_text += f"；参考范围 {rng}"
    return en + ")", zh_text + "）"


def lab_search(t: TurnContext, label: str, *, count: int, deps: list[int] | None = None, **extra) -> list[LabPoint]:
    args = {"category": "laboratory", "code": lab_code(label), "hadm_id": t.plan.hadm_id, "_count": count, **extra}
    return lab_points(t.call("Observation.search", args, deps=deps))


def il_diagnoses(t: TurnContext) -> Built:
    obs = t.call("Condition.search", {"hadm_id": t.plan.hadm_id})
    dx = [(r["code"]["coding"][0]["code"], r["code"]["text"]) for r in resources(obs)]
    if not dx:
        return Built("No diagnoses are coded for this admission.", "本次住院没有编码诊断。", [])
    (code, title), rest = dx[0], dx[1:]
    en = f"Principal diagnosis of admission {t.plan.hadm_id}: {title} ({code})."
    zh_text = f"本次住院（{t.plan.hadm_id}）的主要诊断：{zh_or_quote(title, kind='diagnosis')}（{code}）。"
    if rest:
        en += " Other coded diagnoses: " + "; ".join(f"{x} ({c})" for c, x in rest) + "."
        zh_text += "其他编码诊断：" + "；".join(f"{zh_or_quote(x, kind='diagnosis')}（{c}）" for c, x in rest) + "。"
    second = rest[0][1] if rest else title
    rubric = [
        item(
            f"Names the principal diagnosis: {title}",
            f"指出主要诊断：{zh_or_quote(title, kind='diagnosis')}",
            term_check([title], [zh_or_quote(title, kind="diagnosis")]),
        ),
        item(
            f"Mentions the secondary diagnosis {second}",
            f"提及次要诊断{zh_or_quote(second, kind='diagnosis')}",
            term_check([second], [zh_or_quote(second, kind="diagnosis")]),
        ),
        item("Uses the diagnoses of the current admission only", "仅使用本次住院的诊断", None),
    ]
    return Built(en, zh_text, rubric, entities=[title, second], facts=[f"principal diagnosis {title}"])


def il_med_order(t: TurnContext) -> Built:
    drug = t.plan.focus.drug or ""
    obs = t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": drug.lower()})
    orders = med_orders(obs)
    if not orders:
        return Built(f"No {drug} order is recorded.", f"未记录{zh(drug, kind='drug')}医嘱。", [])
    o = orders[0]
    drug_zh = zh(o.drug, kind="drug")
    en = f"{o.drug} is ordered as {o.dosage} (order {o.rid}, started {when(o.authored)}, status {o.status})."
    zh_text = (
        f"{drug_zh}的医嘱为 {record_text_zh(o.dosage)}（医嘱 {o.rid}，开始于 {when(o.authored)}，"
        f"{MED_STATUS_ZH.get(o.status, o.status)}）。"
    )
    route = o.route or AS_ORDERED
    if o.dose_value is not None:
        dose = item(
            f"States the {o.drug} dose {fmt(o.dose_value)} {o.dose_unit}",
            f"说明{drug_zh}剂量 {fmt(o.dose_value)} {o.dose_unit}",
            value_check(o.dose_value, o.dose_unit),
        )
    else:  # no single number (a sliding scale, a range): the regimen as ordered
        first = o.dosage.split(" ")[0]
        dose = item(
            f"States the {o.drug} regimen as ordered: {o.dosage}",
            f"说明{drug_zh}的医嘱用法：{record_text_zh(o.dosage)}",
            term_check([first], [first]) if first else None,
        )
    rubric = [
        dose,
        item(f"Identifies the drug as {o.drug}", f"识别药物为{drug_zh}", term_check([o.drug], [drug_zh])),
        item(
            f"Gives the route {route}",
            f"给出给药途径 {o.route or '（按原医嘱）'}",
            term_check([route], [route]) if o.route else None,
        ),
    ]
    return Built(en, zh_text, rubric, entities=[drug], facts=[f"{o.drug} {o.dosage}"])


def il_lab_latest(t: TurnContext) -> Built:
    points = lab_search(t, t.plan.focus.lab, count=1)
    if not points:
        return Built("No result is recorded.", "未记录结果。", [])
    p = points[0]
    s_en, s_zh = lab_sentence(p)
    en_terms, zh_terms = STATUS_TERMS[p.status]
    rubric = [
        item(
            f"Reports {lab_name(p.label)} {fmt(p.value)} {p.unit}",
            f"报告{zh(p.label, kind='lab')} {fmt(p.value)} {p.unit}",
            value_check(p.value, p.unit),
        ),
        item(
            f"Says the result is {STATUS_EN[p.status]}",
            f"说明结果{STATUS_ZH[p.status]}",
            term_check(en_terms, zh_terms),
        ),
        item(f"Gives the date {when(p.time)}", f"给出日期 {when(p.time)}", term_check([p.time[:10]], [p.time[:10]])),
    ]
    return Built(
        f"The most recent result is {s_en}.",
        f"最近一次结果：{s_zh}。",
        rubric,
        entities=[t.plan.focus.lab],
        facts=[s_en],
    )


def _note_section(t: TurnContext, section: str) -> str:
    obs = t.call(
        "DocumentReference.search", {"hadm_id": t.plan.hadm_id, "type_code": "discharge-summary", "keyword": section}
    )
    for r in resources(obs):
        for s in r.get("section", []):
            return s.get("text", "").strip()
    return ""


def _drug_term(name: str) -> dict:
    """A drug named in either language (the Chinese answer keeps the English name beside the Chinese one)."""
    found = zh(name, kind="drug")
    return term_check([name], sorted({name, found}))


def _med_lines(text: str) -> list[str]:
    return [line.split(". ", 1)[-1].strip() for line in text.splitlines() if line.strip()]


def il_discharge_meds(t: TurnContext) -> Built:
    meds = _med_lines(_note_section(t, "Discharge Medications"))
    if not meds:
        return Built("No discharge medications are listed.", "未列出出院带药。", [])
    en = "Discharge medications: " + "; ".join(meds) + "."
    zh_text = "出院带药：" + "；".join(drug_line_zh(m) for m in meds) + "。"
    names = [split_drug(m)[0] for m in meds]
    rubric = [
        item(f"Lists {meds[0]}", f"列出{drug_line_zh(meds[0])}", _drug_term(names[0])),
        item(f"Lists {meds[-1]}", f"列出{drug_line_zh(meds[-1])}", _drug_term(names[-1])),
        item(f"Gives all {len(meds)} discharge medications with doses", f"给出全部 {len(meds)} 种出院带药及剂量", None),
    ]
    count = Derivation("count", "number of discharge medication lines", {"lines": meds}, {}, len(meds))
    return Built(en, zh_text, rubric, [count], entities=["discharge medications", *names], facts=meds)


def _care_plan(t: TurnContext, *, deps: list[int] | None = None) -> tuple[str, str]:
    obs = t.call("CarePlan.search", {"hadm_id": t.plan.hadm_id}, deps=deps)
    for r in resources(obs):
        acts = [a["detail"]["description"] for a in r.get("activity", []) if a.get("detail", {}).get("description")]
        return " ".join(acts), r.get("description", "")
    return "", ""


def il_followup(t: TurnContext) -> Built:
    follow, _ = _care_plan(t)
    if not follow:
        return Built("No follow-up is recorded.", "未记录随访安排。", [])
    first = follow.split(".")[0].strip()
    rubric = [
        item(
            f"States the follow-up: {first}",
            f"说明随访安排（病历原文：“{first}”）",
            term_check([first.split(" ")[0]], [first.split(" ")[0]]),
        ),
        item("Quotes the follow-up timing as recorded", "按病历给出随访时间", None),
        item(
            "Takes the follow-up from the discharge care plan",
            "随访信息来自出院照护计划",
            term_check(["follow-up", "follow up"], ["随访"]),
        ),
    ]
    return Built(
        f"The discharge care plan lists this follow-up: {follow}",
        f"出院照护计划中的随访安排（病历原文）：“{follow}”",
        rubric,
        entities=["follow-up"],
        facts=[follow],
    )


def dg_lab_panel(t: TurnContext) -> Built:
    labs = (t.plan.focus.lab, *kb.RELATED_LABS.get(t.plan.focus.lab, ("Creatinine", "Potassium")))
    found: list[LabPoint] = []
    for label in labs[:3]:
        points = lab_search(t, label, count=2)
        if points:
            found.append(points[0])
    parts = [lab_sentence(p) for p in found]
    rubric = [
        item(
            f"Reports {lab_name(p.label)} {fmt(p.value)} {p.unit}",
            f"报告{zh(p.label, kind='lab')} {fmt(p.value)} {p.unit}",
            value_check(p.value, p.unit),
        )
        for p in found
    ]
    abnormal = [p for p in found if p.status != "normal"]
    rubric.append(
        item(
            "Points out which results are outside the reference range"
            if abnormal
            else "States that the results are within range",
            "指出哪些结果超出参考范围" if abnormal else "说明结果在参考范围内",
            term_check(*STATUS_TERMS[abnormal[0].status if abnormal else "normal"]),
        )
    )
    if len(rubric) < 4:
        rubric.append(item("Gives each result with its date", "给出每项结果的日期", None))
    en = "Latest results: " + "; ".join(p[0] for p in parts) + "."
    zh_text = "最新结果：" + "；".join(p[1] for p in parts) + "。"
    return Built(en, zh_text, rubric, entities=[p.label for p in found], facts=[p[0] for p in parts])


def dg_drug_then_lab(t: TurnContext) -> Built:
    drug, lab = t.plan.focus.drug or "", t.plan.focus.lab
    orders = med_orders(t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": drug.lower()}))
    if not orders:
        return Built(f"No {drug} order.", f"无{zh(drug, kind='drug')}医嘱。", [])
    start = min(o.authored for o in orders)
    points = lab_search(t, lab, count=5, deps=[0], date_from=start[:10])
    series = list(reversed(points))
    drug_zh, lab_zh = zh(drug, kind="drug"), zh(lab, kind="lab")
    vals = ", ".join(f"{fmt(p.value)} ({when(p.time)})" for p in series)
    unit = series[0].unit if series else ""
    en = f"{drug} was started on {when(start)}. {cap(lab_name(lab))} since then ({unit}): {vals}."
    zh_text = f"{drug_zh}开始于 {when(start)}。此后{lab_zh}（{unit}）：{vals}。"
    rubric = [
        item(
            f"Gives the {drug} start {start[:10]}",
            f"给出{drug_zh}开始日期 {start[:10]}",
            term_check([start[:10]], [start[:10]]),
        ),
        item(
            f"Reports the first {lab_name(lab)} after the start",
            f"报告开始用药后首次{lab_zh}",
            value_check(series[0].value, unit) if series else None,
        ),
        item(
            f"Reports the latest {lab_name(lab)}",
            f"报告最近一次{lab_zh}",
            value_check(series[-1].value, unit) if series else None,
        ),
        item(
            f"Limits the {lab_name(lab)} search to the time after {drug} was started",
            f"仅检索开始{drug_zh}后的{lab_zh}",
            None,
        ),
    ]
    return Built(en, zh_text, rubric, entities=[drug, lab], facts=[en])


def dg_adherence(t: TurnContext) -> Built:
    drug = t.plan.focus.drug or ""
    drug_zh = zh(drug, kind="drug")
    orders = med_orders(t.call("MedicationRequest.search", {"hadm_id": t.plan.hadm_id, "medication": drug.lower()}))
    said = t.call("patient.get_medication_adherence", {"drug": drug.lower()})
    o = orders[0] if orders else None
    order_en = f"{o.drug} is ordered as {o.dosage} ({o.rid})" if o else f"no {drug} order is recorded"
    order_zh = f"{drug_zh}医嘱为 {record_text_zh(o.dosage)}（{o.rid}）" if o else f"未记录{drug_zh}医嘱"
    en = f'In the record, {order_en}. Asked about adherence, the patient says: "{patient_text(said, language="en")}"'
    zh_text = f"病历中{order_zh}。询问服药依从性时，患者表示：“{patient_text(said, language='zh')}”"
    rubric = [
        item(
            f"States the ordered {drug} regimen",
            f"说明{drug_zh}的医嘱方案",
            value_check(o.dose_value, o.dose_unit) if o else None,
        ),
        item("Asks the patient (not only the record) about adherence", "向患者本人询问服药依从性", None),
        item(
            "Reports what the patient says about missed or adjusted doses", "报告患者关于漏服或自行调整剂量的陈述", None
        ),
        item(f"Names {drug}", f"提及{drug_zh}", term_check([drug], [drug_zh])),
    ]
    return Built(en, zh_text, rubric, entities=[drug], facts=[order_en])


def dg_patient_history(t: TurnContext) -> Built:
    sym = t.call("patient.get_symptom_history", {"query": "What symptoms brought you to the hospital?"})
    soc = t.call("patient.get_social_history", {})
    en = (
        f'Symptoms, in the patient\'s words: "{patient_text(sym, language="en")}" '
        f'Social history: "{patient_text(soc, language="en")}"'
    )
    zh_text = f"症状（患者自述）：“{patient_text(sym, language='zh')}” 社会史：“{patient_text(soc, language='zh')}”"
    rubric = [
        item("Asks the patient about the presenting symptoms", "向患者询问本次就诊症状", None),
        item(
            "Reports onset and course of the symptoms as the patient describes them",
            "按患者描述报告症状起病及经过",
            None,
        ),
        item(
            "Asks about smoking, alcohol and living situation",
            "询问吸烟、饮酒及居住情况",
            term_check(["smok", "alcohol"], ["吸烟", "饮酒"]),
        ),
        item("Does not invent symptoms the patient did not report", "不编造患者未报告的症状", None, safety=True),
    ]
    return Built(en, zh_text, rubric, entities=["symptoms"], facts=[en])


def dg_discharge_review(t: TurnContext) -> Built:
    meds = _med_lines(_note_section(t, "Discharge Medications"))
    follow, _ = _care_plan(t)
    en = "Discharge medications: " + "; ".join(meds) + f". Follow-up: {follow}"
    zh_text = "出院带药：" + "；".join(drug_line_zh(m) for m in meds) + f"。随访（病历原文）：“{follow}”"
    first = split_drug(meds[0])[0] if meds else ""
    rubric = [
        item(
            f"Lists {meds[0] if meds else 'the discharge medications'}",
            f"列出{drug_line_zh(meds[0]) if meds else '出院带药'}",
            _drug_term(first) if first else None,
        ),
        item(
            "Gives the follow-up appointments from the care plan",
            "给出照护计划中的随访安排",
            term_check(["follow"], ["随访"]),
        ),
        item("Checks that drugs needing monitoring have a matching follow-up", "核对需监测的药物有相应随访", None),
        item("Uses the discharge note and care plan of this admission", "使用本次住院的出院小结和照护计划", None),
    ]
    return Built(en, zh_text, rubric, entities=["discharge medications", "follow-up"], facts=[*meds, follow])
