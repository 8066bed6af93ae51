"""Physician request templates per turn kind: explicit form and the three implicit rewrites, EN + ZH.

Placeholders come from ``TurnContext.names()``. NA rewrites use a pronoun for the turn's entity
(the planner only picks NA when an earlier turn established it); PE drops the predicate; AE opens
with an abstract anaphor over everything said so far.
"""

from __future__ import annotations

# kind: {"X": (en, zh), "NA": ..., "PE": ..., "AE": ...}
REQUESTS: dict[str, dict[str, tuple[str, str]]] = {
    "il_diagnoses": {
        "X": ("What diagnoses were coded for the current admission?", "本次住院编码了哪些诊断？"),
        "NA": ("What was it coded as?", "它的编码诊断是什么？"),
        "PE": ("Diagnoses?", "诊断呢？"),
        "AE": ("Given all that, what diagnoses were coded?", "综合以上，编码了哪些诊断？"),
    },
    "il_med_order": {
        "X": (
            "What is the current {drug} order for this patient: dose, route and frequency?",
            "该患者目前{drug_zh}的医嘱是什么（剂量、给药途径和频次）？",
        ),
        "NA": ("What dose is it ordered at?", "它的医嘱剂量是多少？"),
        "PE": ("{Drug} order?", "{drug_zh}医嘱？"),
        "AE": ("Given all that, where does the {drug} order stand?", "综合以上，{drug_zh}的医嘱目前是怎样的？"),
    },
    "il_lab_latest": {
        "X": ("What is the most recent {lab} result in this admission?", "本次住院最近一次{lab_zh}结果是多少？"),
        "NA": ("What is its most recent value?", "它最近一次的数值是多少？"),
        "PE": ("{Lab}?", "{lab_zh}呢？"),
        "AE": ("Given all that, what does the latest {lab} show?", "综合以上，最近一次{lab_zh}结果如何？"),
    },
    "il_discharge_meds": {
        "X": ("Which medications is the patient being discharged on?", "患者出院带药有哪些？"),
        "NA": ("What are they being sent home on?", "他们出院带哪些药？"),
        "PE": ("Discharge meds?", "出院带药？"),
        "AE": ("Given all that, what are the discharge medications?", "综合以上，出院带药有哪些？"),
    },
    "il_followup": {
        "X": ("What follow-up has been arranged after discharge?", "出院后安排了哪些随访？"),
        "NA": ("When is it scheduled?", "它安排在什么时候？"),
        "PE": ("Follow-up?", "随访呢？"),
        "AE": ("Given all that, what follow-up is planned?", "综合以上，安排了哪些随访？"),
    },
    "dg_lab_panel": {
        "X": (
            "Pull the recent {lab} together with the related labs for this admission.",
            "调取本次住院近期的{lab_zh}及相关检验结果。",
        ),
        "NA": ("Pull it together with the related labs.", "把它和相关检验一起调出来。"),
        "PE": ("{Lab} and related labs?", "{lab_zh}及相关检验？"),
        "AE": ("Given all that, what do the related labs show?", "综合以上，相关检验结果如何？"),
    },
    "dg_drug_then_lab": {
        "X": (
            "When was {drug} started, and how has {lab} run since then?",
            "{drug_zh}是何时开始使用的？此后{lab_zh}变化如何？",
        ),
        "NA": ("Since it was started, how has {lab} run?", "自开始用它以来，{lab_zh}如何变化？"),
        "PE": ("{Lab} since {drug}?", "用{drug_zh}以来的{lab_zh}？"),
        "AE": ("Given all that, what has {lab} done since {drug} began?", "综合以上，开始{drug_zh}以来{lab_zh}怎样？"),
    },
    "dg_adherence": {
        "X": (
            "Check the {drug} order and ask the patient how they actually take {drug} at home.",
            "核对{drug_zh}医嘱，并询问患者在家实际如何服用{drug_zh}。",
        ),
        "NA": ("Is the patient actually taking it as ordered?", "患者实际是否按医嘱服用它？"),
        "PE": ("{Drug} adherence?", "{drug_zh}依从性？"),
        "AE": ("Given all that, how is the patient really taking {drug}?", "综合以上，患者实际如何服用{drug_zh}？"),
    },
    "dg_patient_history": {
        "X": (
            "Ask the patient about the symptoms that brought them in and about their social history.",
            "询问患者此次就诊的症状以及社会史。",
        ),
        "NA": ("Ask the patient about them.", "问问患者这些情况。"),
        "PE": ("Symptoms and social history?", "症状和社会史？"),
        "AE": (
            "Given all that, what does the patient report about symptoms and habits?",
            "综合以上，患者自述的症状和生活习惯如何？",
        ),
    },
    "dg_discharge_review": {
        "X": (
            "Review the discharge medication list together with the discharge care plan and follow-up.",
            "结合出院照护计划和随访安排，复核出院带药清单。",
        ),
        "NA": ("Review them against the care plan.", "对照照护计划复核它们。"),
        "PE": ("Care plan and follow-up?", "照护计划和随访？"),
        "AE": (
            "Given all that, how do the medications and the follow-up plan fit together?",
            "综合以上，出院带药与随访计划是否衔接？",
        ),
    },
    "cr_ref_range": {
        "X": (
            "Is the latest {lab} within its reference range, and what does that mean for this patient?",
            "最近一次{lab_zh}是否在参考范围内？对该患者意味着什么？",
        ),
        "NA": ("Is it within range, and does it matter here?", "它在参考范围内吗？这对患者有何意义？"),
        "PE": ("{Lab} in range?", "{lab_zh}在范围内吗？"),
        "AE": ("Given all that, is the latest {lab} a concern?", "综合以上，最近的{lab_zh}值得担心吗？"),
    },
    "cr_trend": {
        "X": (
            "How has {lab} trended over this admission and what does the trend suggest?",
            "本次住院期间{lab_zh}的趋势如何？提示什么？",
        ),
        "NA": ("How has it trended, and what does that suggest?", "它的趋势如何？提示什么？"),
        "PE": ("{Lab} trend?", "{lab_zh}趋势？"),
        "AE": (
            "Given all that, which way is {lab} heading and why does it matter?",
            "综合以上，{lab_zh}走向如何？为何重要？",
        ),
    },
    "cr_threshold": {
        "X": (
            "Is the latest {lab} beyond the safety threshold for {drug}, and what should be done with {drug}?",
            "最近一次{lab_zh}是否超出{drug_zh}的安全阈值？{drug_zh}应如何处理？",
        ),
        "NA": ("Is it safe to continue it with this {lab}?", "以目前的{lab_zh}，继续使用它安全吗？"),
        "PE": ("{Drug} with this {lab}?", "这个{lab_zh}下的{drug_zh}？"),
        "AE": ("Given all that, is {drug} still safe?", "综合以上，{drug_zh}还安全吗？"),
    },
    "cr_crcl": {
        "X": (
            "Estimate the creatinine clearance with Cockcroft-Gault from the current age, weight and creatinine.",
            "请根据当前年龄、体重和肌酐，用 Cockcroft-Gault 公式估算肌酐清除率。",
        ),
        "NA": ("What clearance does it translate to?", "它换算成肌酐清除率是多少？"),
        "PE": ("Cockcroft-Gault?", "Cockcroft-Gault 呢？"),
        "AE": (
            "Given all that, what is the kidney function by Cockcroft-Gault?",
            "综合以上，按 Cockcroft-Gault 公式肾功能如何？",
        ),
    },
    "cr_interaction": {
        "X": (
            "Is there a problem with giving {drug} together with {drug2}? Check {lab}.",
            "{drug_zh}与{drug2_zh}合用是否有问题？请查看{lab_zh}。",
        ),
        "NA": ("Is it safe together with {drug2}?", "它与{drug2_zh}合用安全吗？"),
        "PE": ("{Drug} plus {drug2}?", "{drug_zh}加{drug2_zh}？"),
        "AE": ("Given all that, is the combination with {drug2} a concern?", "综合以上，与{drug2_zh}合用值得担心吗？"),
    },
    "cr_renal_dosing": {
        "X": (
            "Is the {renal} dose appropriate for this patient's kidney function by Cockcroft-Gault?",
            "按 Cockcroft-Gault 公式评估的肾功能，{renal_zh}的剂量是否合适？",
        ),
        "NA": ("Is its dose right for the kidneys?", "它的剂量对肾功能合适吗？"),
        "PE": ("{Renal} renal dosing?", "{renal_zh}肾功能剂量？"),
        "AE": ("Given all that, does {renal} need renal adjustment?", "综合以上，{renal_zh}需要按肾功能调整吗？"),
    },
    "wu_hold_drug": {
        "X": ("Put the {drug} order on hold because of the {lab} result.", "因{lab_zh}结果，暂停{drug_zh}医嘱。"),
        "NA": ("Hold it.", "先暂停它。"),
        "PE": ("Hold {drug}.", "暂停{drug_zh}。"),
        "AE": ("Given all that, go ahead and put the order on hold.", "鉴于以上情况，请把该医嘱暂停。"),
    },
    "wu_order_lab": {
        "X": ("Order a repeat {lab} for {date}.", "为 {date} 开一次{lab_zh}复查。"),
        "NA": ("Order it again for {date}.", "{date} 再查一次它。"),
        "PE": ("Repeat {lab}, {date}.", "复查{lab_zh}，{date}。"),
        "AE": ("Given all that, order the recheck for {date}.", "鉴于以上，开 {date} 的复查医嘱。"),
    },
    "wu_flag": {
        "X": (
            "Flag the {drug} and {drug2} interaction on the patient's record.",
            "在患者病历上标记{drug_zh}与{drug2_zh}的相互作用。",
        ),
        "NA": ("Flag it on the record.", "在病历上标记它。"),
        "PE": ("Flag {drug} with {drug2}.", "标记{drug_zh}与{drug2_zh}。"),
        "AE": ("Given all that, put an alert on the record.", "鉴于以上，在病历上加一个警示。"),
    },
}

AE_MARKERS_EN = ("Given all that", "Given that", "In light of that")
AE_MARKERS_ZH = ("综合以上", "鉴于以上", "鉴于此")
NA_PRONOUNS_EN = ("it", "its", "them", "they", "their")
NA_PRONOUNS_ZH = ("它", "他们", "它们")
PE_MAX_WORDS = 5


def request(kind: str, form: str, names: dict[str, str]) -> tuple[str, str]:
    en, zh_text = REQUESTS[kind][form]
    return en.format(**names), zh_text.format(**names)
