"""One fact → one sentence in the patient's voice, in English or Chinese, at a literacy level.

Sentences only re-word what the fact quotes (a slot intro, first person, lay words, frequency
abbreviations spelled out); numbers and units are carried over unchanged, so the English and
Chinese answers state the same numbers.
"""

from __future__ import annotations

import re

from ehr import glossary
from scenarios.patient.facts import Fact
from scenarios.patient.lexicon import drug_zh, lay_en, lay_zh, to_zh

FREQ_EN = {
    "DAILY": "once a day",
    "BID": "twice a day",
    "TID": "three times a day",
    "QID": "four times a day",
    "QHS": "at bedtime",
    "HS": "at bedtime",
    "QAM": "every morning",
    "QPM": "every evening",
    "QOD": "every other day",
    "PRN": "when I need it",
    "WEEKLY": "once a week",
    "ONCE": "once",
    "CONTINUOUS": "continuously",
}
FREQ_ZH = {
    "DAILY": "每天一次",
    "BID": "每天两次",
    "TID": "每天三次",
    "QID": "每天四次",
    "QHS": "睡前",
    "HS": "睡前",
    "QAM": "每天早上",
    "QPM": "每天晚上",
    "QOD": "隔天一次",
    "PRN": "需要时",
    "WEEKLY": "每周一次",
    "ONCE": "一次",
    "CONTINUOUS": "持续",
}
_INTRO = {
    ("symptom", "onset"): ("When it started: {v}", "开始的情况：{v}"),
    ("symptom", "location"): ("Where I feel it: {v}", "哪里不舒服：{v}"),
    ("symptom", "duration"): ("How long it has been going on: {v}", "持续多久：{v}"),
    ("symptom", "character"): ("What it feels like: {v}", "感觉是这样的：{v}"),
    ("symptom", "severity"): ("How bad it is: {v}", "有多严重：{v}"),
    ("symptom", "modifiers"): ("What makes it better or worse: {v}", "什么情况下好一些或更重：{v}"),
    ("symptom", "associated"): ("I have also had {v}", "另外还有：{v}"),
    ("chief_complaint", "chief_complaint"): ("I came in because of {v}", "我这次来是因为{v}"),
    ("pain", "score"): ("How bad the pain is: {v}", "疼得有多厉害：{v}"),
    ("pain", "charted_first"): ("When I first came in, my pain level was {v}", "刚入院的时候，疼痛程度：{v}"),
    ("pain", "charted_latest"): (
        "The last time the nurses asked, my pain level was {v}",
        "最近一次护士问的时候，疼痛程度：{v}",
    ),
    ("social", "smoking"): ("About smoking: {v}", "吸烟：{v}"),
    ("social", "alcohol"): ("About alcohol: {v}", "喝酒：{v}"),
    ("social", "substance_use"): ("About drugs: {v}", "毒品或药物滥用：{v}"),
    ("social", "living_situation"): ("At home: {v}", "居住情况：{v}"),
    ("social", "support"): ("Who helps me: {v}", "谁照顾我：{v}"),
    ("social", "occupation"): ("For work: {v}", "工作：{v}"),
    ("functional", "mobility"): ("Getting around: {v}", "行动方面：{v}"),
    ("functional", "self_care"): ("Looking after myself: {v}", "生活自理：{v}"),
    ("functional", "falls"): ("About falls: {v}", "跌倒方面：{v}"),
    ("functional", "exercise_tolerance"): ("How much I can do: {v}", "能活动多少：{v}"),
    ("functional", "cognition"): ("My thinking and memory: {v}", "头脑和记性：{v}"),
    ("adherence", "general"): ("About taking my medicines: {v}", "吃药的情况：{v}"),
    ("adherence", "drug"): ("About my medicines: {v}", "关于吃药：{v}"),
    ("medication", "mentioned"): ("Also: {v}", "另外：{v}"),
    ("allergy", "substance"): ("I am allergic to {v}", "我对{v}过敏"),
    ("allergy", "none"): ("Allergies: {v}", "过敏：{v}"),
    ("history", "condition"): ("I have {v}", "我有{v}"),
}
# Third person as charted → first person as said ("admits to" → "I admit to").
_FIRST_PERSON = {
    "admits": "I admit",
    "takes": "I take",
    "uses": "I use",
    "reports": "I report",
    "states": "I say",
    "denies": "I deny",
    "has": "I have",
    "is": "I am",
    "lives": "I live",
    "walks": "I walk",
    "needs": "I need",
}
_PAST_VERB = re.compile(r"^(stopped|ran|skipped|took|started|continued|missed|forgot|quit|ran out)\b", re.I)


def freq_en(code: str) -> str | None:
    hours = re.fullmatch(r"Q(\d{1,2})H", code.upper())
    return f"every {hours.group(1)} hours" if hours else FREQ_EN.get(code.upper())


def freq_zh(code: str) -> str | None:
    hours = re.fullmatch(r"Q(\d{1,2})H", code.upper())
    return f"每{hours.group(1)}小时一次" if hours else FREQ_ZH.get(code.upper())


_SUBJECT = re.compile(r"^(he|she|the patient|patient|pt)\s+(also\s+)?(\w+)", re.I)
_POSSESSIVE = re.compile(r"\b(his|her)\b", re.I)


def first_person(text: str) -> str:
    """Charted third person → the patient's first person; clinical content untouched."""
    match = _SUBJECT.match(text)
    if match:
        verb = match.group(3)
        low = verb.lower()
        said = {"has": "have", "is": "am", "was": "was", "does": "do"}.get(low)
        if said is None:
            said = verb[:-1] if low.endswith("s") and not low.endswith("ss") else verb
        text = f"I {match.group(2) or ''}{said}{text[match.end() :]}"
        return _POSSESSIVE.sub("my", text)
    head, _, rest = text.partition(" ")
    if head.lower() in _FIRST_PERSON:
        return f"{_FIRST_PERSON[head.lower()]} {rest}".strip()
    if _PAST_VERB.match(text):
        return f"I {text[0].lower()}{text[1:]}"
    return text


def _lower_first(text: str) -> str:
    first = text.split()[0] if text.split() else text
    return text if first.isupper() or len(first) == 1 else text[0].lower() + text[1:]


def display_name(name: str, *, literacy: str) -> str:
    plain = re.sub(r"\s*\(.*?\)", "", name).strip()
    return plain.lower() if literacy == "low" else plain


def _med_en(fact: Fact, *, literacy: str) -> str:
    a = fact.attrs
    if fact.slot == "inpatient":
        cols = a.get("columns") or {}
        dose = f" {cols['dose_val_rx']} {cols.get('dose_unit_rx', '')}".rstrip() if "dose_val_rx" in cols else ""
        name = display_name(fact.value, literacy=literacy)
        return f"{name}{dose if literacy == 'high' else ''}"
    if literacy == "high":
        return fact.value
    name = display_name(str(a.get("name", fact.value)), literacy=literacy)
    dose = f" {a['dose']} {a['unit']}" if "dose" in a and literacy != "low" else ""
    freq = freq_en(str(a.get("frequency", "")))
    return f"{name}{dose}" + (f", {freq}" if freq else "")


def _med_zh(fact: Fact, *, literacy: str) -> str:
    a = fact.attrs
    raw = str(a.get("name", fact.value))
    name = drug_zh(raw) or display_name(raw, literacy="high")
    if fact.slot == "inpatient":
        cols = a.get("columns") or {}
        dose = f" {cols['dose_val_rx']} {cols.get('dose_unit_rx', '')}".rstrip() if "dose_val_rx" in cols else ""
        return f"{name}{dose if literacy == 'high' else ''}"
    dose = f" {a['dose']} {a['unit']}" if "dose" in a and literacy != "low" else ""
    route = glossary.translate(term=str(a.get("route", "")), kind="route") if a.get("route") else None
    freq = freq_zh(str(a.get("frequency", "")))
    parts = [f"{name}{dose}"]
    if route and literacy == "high":
        parts.append(route)
    if freq:
        parts.append(freq)
    return "，".join(parts)


def value_en(fact: Fact, *, literacy: str) -> str:
    if fact.category == "medication" and fact.slot in ("home", "inpatient"):
        return _med_en(fact, literacy=literacy)
    text = " ".join(fact.value.split())
    if fact.category != "allergy":
        text = first_person(text)
    if fact.category == "pain" and fact.slot.startswith("charted"):
        text = text.lower()
    if fact.category == "chief_complaint":
        text = _lower_first(text)
    return lay_en(text) if literacy == "low" else text


def value_zh(fact: Fact, *, literacy: str) -> str:
    if fact.category == "medication" and fact.slot in ("home", "inpatient"):
        return _med_zh(fact, literacy=literacy)
    zh = None
    if fact.category == "social":
        zh = to_zh(f"{fact.slot}: {fact.value}")
    zh = zh or to_zh(fact.value)
    if zh is None:
        # Untranslated record text is quoted as written rather than paraphrased.
        zh = f"「{fact.value}」"
    return lay_zh(zh) if literacy == "low" else zh


def _oneline(text: str) -> str:
    return " ".join(text.split())  # note text wraps mid-sentence


def sentence(fact: Fact, *, language: str, literacy: str) -> str:
    en, zh = _INTRO.get((fact.category, fact.slot), ("{v}", "{v}"))
    if language == "zh":
        return zh.format(v=_oneline(value_zh(fact, literacy=literacy))).rstrip("。") + "。"
    said = _oneline(value_en(fact, literacy=literacy))
    if said.startswith("I ") and fact.category in ("symptom", "pain"):
        en = "{v}"  # a free-text sentence already in first person needs no intro
    text = en.format(v=said).rstrip(".")
    return text[0].upper() + text[1:] + "."


def medication_list(facts: list[Fact], *, language: str, literacy: str, inpatient: bool) -> str:
    if language == "zh":
        items = "；".join(_med_zh(f, literacy=literacy) for f in facts)
        return (f"住院期间给我用了：{items}。") if inpatient else f"我在家吃的药有：{items}。"
    items = "; ".join(_med_en(f, literacy=literacy) for f in facts)
    return f"Here in hospital they have given me: {items}." if inpatient else f"At home I take: {items}."
