"""Which memory facts answer a patient-tool call (before persona filtering).

Arguments are the released contract's: ``query`` (symptom history, a symptom or a whole question) and
``drug`` (adherence); social history, functional status and pain take none and tell everything. Calls
stored before the contract may still carry ``symptom``/``question``, ``medication``, ``topic``,
``domain`` or ``location``: they are read as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scenarios.patient.facts import SYMPTOM_SLOTS, Fact, HealthMemory
from scenarios.patient.lexicon import DRUG_CLASSES, drugs_zh_reverse, lay_en, symptom_words_en
from scenarios.patient.text import words

SOCIAL_ORDER = ("smoking", "alcohol", "substance_use", "living_situation", "support", "occupation")
FUNCTIONAL_ORDER = ("mobility", "self_care", "falls", "exercise_tolerance", "cognition")
# Free-text topics (EN/ZH) → slot, for arguments outside the schema's enum.
_TOPIC_WORDS = {
    "smok": "smoking",
    "tobacco": "smoking",
    "cigar": "smoking",
    "吸烟": "smoking",
    "抽烟": "smoking",
    "alcohol": "alcohol",
    "drink": "alcohol",
    "饮酒": "alcohol",
    "喝酒": "alcohol",
    "substance": "substance_use",
    "drug": "substance_use",
    "毒品": "substance_use",
    "药物滥用": "substance_use",
    "living": "living_situation",
    "live": "living_situation",
    "home": "living_situation",
    "居住": "living_situation",
    "住": "living_situation",
    "support": "support",
    "family": "support",
    "支持": "support",
    "家人": "support",
    "occupation": "occupation",
    "work": "occupation",
    "job": "occupation",
    "工作": "occupation",
    "职业": "occupation",
    "mobil": "mobility",
    "walk": "mobility",
    "行动": "mobility",
    "走路": "mobility",
    "self": "self_care",
    "adl": "self_care",
    "自理": "self_care",
    "fall": "falls",
    "跌倒": "falls",
    "摔": "falls",
    "exercise": "exercise_tolerance",
    "stairs": "exercise_tolerance",
    "运动": "exercise_tolerance",
    "活动耐量": "exercise_tolerance",
    "cogni": "cognition",
    "memory": "cognition",
    "认知": "cognition",
    "记忆": "cognition",
}
_GENERIC_SYMPTOM = {"symptom", "symptoms", "complaint", "problem", "main", "症状", "不舒服", "主诉", "哪里"}
# Words of a question that name no symptom ("What symptoms brought you to the hospital?").
_QUESTION_TEXT = (
    "what which how when why who where do does did is are was were be been being have has had having any "
    "the a an you your yours me my i to in into at for of about with from on that this these those it its "
    "and or tell describe brought bring made make come came here hospital today now admission admitted "
    "current recent history feel feeling felt wrong problems complaints experiencing experience going happened"
)
_QUESTION_WORDS = frozenset(_QUESTION_TEXT.split()) | {g for g in _GENERIC_SYMPTOM if g.isascii()}
_PAINISH = re.compile(r"\b(pain\w*|ache|aching|discomfort|tender\w*|hurt\w*|cramp\w*|sore)\b|\d{1,2}/10", re.I)


@dataclass(frozen=True)
class Selection:
    facts: tuple[Fact, ...]
    unknown_drug: bool = False  # a medication was named that the record does not list


def _slot(value: str | None, order: tuple[str, ...]) -> str | None:
    if not value:
        return None
    low = value.strip().casefold()
    if low in order:
        return low
    return next((slot for word, slot in _TOPIC_WORDS.items() if word in low and slot in order), None)


def matches_symptom(*, query: str, facts: list[Fact]) -> bool:
    """Does a (possibly Chinese) symptom query name something in these facts?"""
    asked = {w[:5] for w in words(symptom_words_en(query)) if len(w) >= 3}
    said = {w[:5] for f in facts for w in words(f.value + " " + lay_en(f.value)) if len(w) >= 3}
    return bool(asked & said)


def drug_targets(query: str) -> set[str]:
    """Lower-case drug words a medication query stands for (class words and Chinese names expanded)."""
    low = query.casefold()
    out = {w for w in re.findall(r"[a-z][a-z'-]{3,}", low)}
    for cls, members in DRUG_CLASSES.items():
        if cls in low:
            out.update(members)
    for zh, en in drugs_zh_reverse().items():
        if zh in query:
            out.add(en)
    return out


def _names(fact: Fact) -> list[str]:
    names = [str(d) for d in fact.attrs.get("drugs") or []]
    if fact.attrs.get("name"):
        names.append(str(fact.attrs["name"]))
    return [n.casefold() for n in names]


def _drug_hit(fact: Fact, targets: set[str]) -> bool:
    for name in _names(fact):
        first = name.split()[0] if name.split() else name
        if any(t == first or t in name or (len(t) >= 5 and first.startswith(t[:5])) for t in targets):
            return True
    return False


def _symptoms(memory: HealthMemory) -> list[Fact]:
    order = {slot: i for i, slot in enumerate(SYMPTOM_SLOTS)}
    return sorted(memory.of("symptom"), key=lambda f: order.get(f.slot, len(order)))  # stable: memory order


def _asked(args: dict[str, Any], *names: str) -> str:
    """The first non-empty argument of ``names``: the contract's name first, then names of stored old calls."""
    return next((str(args[n]).strip() for n in names if str(args.get(n) or "").strip()), "")


def _symptom_history(args: dict[str, Any], memory: HealthMemory) -> Selection:
    facts = memory.of("chief_complaint")[:1] + _symptoms(memory)
    # `query` (the contract); `symptom`/`question` of calls stored before it.
    query = _asked(args, "query", "symptom", "question")
    content = " ".join(sorted(words(query) - _QUESTION_WORDS))
    chinese_generic = any(g in query for g in _GENERIC_SYMPTOM if not g.isascii())
    if not query or (not content and (query.isascii() or chinese_generic)):
        return Selection(tuple(facts))  # a general question: the whole history
    if matches_symptom(query=content if query.isascii() else query, facts=facts) or chinese_generic:
        return Selection(tuple(facts))
    return Selection(())


def _medication_adherence(args: dict[str, Any], memory: HealthMemory) -> Selection:
    home, inpatient = memory.of("medication", "home"), memory.of("medication", "inpatient")
    mentioned, adherence = memory.of("medication", "mentioned"), memory.of("adherence")
    allergies = memory.of("allergy")
    query = _asked(args, "drug", "medication")  # `medication` of calls stored before the contract
    if not query:
        meds = home or inpatient
        return Selection(tuple(meds + adherence + mentioned + allergies))
    targets = drug_targets(query)
    meds = [f for f in home + inpatient + mentioned if _drug_hit(f, targets)]
    drug_adherence = [f for f in adherence if _drug_hit(f, targets)]
    general = [f for f in adherence if f.slot == "general"] if any(f.slot == "home" for f in meds) else []
    allergic = [
        f
        for f in allergies
        if f.slot == "substance" and any(t[:6] in f.value.casefold() or f.value.casefold()[:6] in t for t in targets)
    ]
    facts = meds + drug_adherence + general + allergic
    return Selection(tuple(facts), unknown_drug=not facts)


def _by_slot(facts: list[Fact], *, wanted: str | None, order: tuple[str, ...]) -> Selection:
    if wanted is not None:
        return Selection(tuple(f for f in facts if f.slot == wanted))
    rank = {slot: i for i, slot in enumerate(order)}
    return Selection(tuple(sorted(facts, key=lambda f: rank.get(f.slot, len(rank)))))  # stable: memory order


def _pain(args: dict[str, Any], memory: HealthMemory) -> Selection:
    complaint = memory.of("chief_complaint") + _symptoms(memory)
    painful = any(_PAINISH.search(f.value) for f in complaint)
    hpi = [f for f in _symptoms(memory) if f.slot != "associated"] if painful else []
    charted = memory.of("pain", "charted_first") + memory.of("pain", "charted_latest")
    facts = hpi + memory.of("pain", "score") + charted
    where = _asked(args, "location")  # only calls stored before the contract (it takes no location)
    if where and not matches_symptom(
        query=where, facts=memory.of("chief_complaint") + memory.of("symptom", "location")
    ):
        return Selection(())
    return Selection(tuple(facts))


def select_facts(*, tool: str, arguments: dict[str, Any], memory: HealthMemory) -> Selection:
    if tool == "patient.get_symptom_history":
        return _symptom_history(arguments, memory)
    if tool == "patient.get_medication_adherence":
        return _medication_adherence(arguments, memory)
    # The contract gives these two no topic: the patient tells the whole history. A `topic`/`domain`
    # of a call stored before the contract still narrows it.
    if tool == "patient.get_social_history":
        topic = _asked(arguments, "topic")
        wanted = _slot(topic, SOCIAL_ORDER)
        if topic and wanted is None:
            return Selection(())
        return _by_slot(memory.of("social"), wanted=wanted, order=SOCIAL_ORDER)
    if tool == "patient.get_functional_status":
        domain = _asked(arguments, "domain")
        wanted = _slot(domain, FUNCTIONAL_ORDER)
        if domain and wanted is None:
            return Selection(())
        return _by_slot(memory.of("functional"), wanted=wanted, order=FUNCTIONAL_ORDER)
    if tool == "patient.get_pain_assessment":
        return _pain(arguments, memory)
    raise ValueError(f"unknown patient tool {tool!r}")
