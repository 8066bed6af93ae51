"""Answer the five patient tools from the memory, in the persona's voice.

Answer format (a JSON object)::

    {"resourceType": "PatientAnswer",
     "tool": "patient.get_medication_adherence",
     "language": "en" | "zh",
     "answer": "At home I take: ...",          # what the patient says
     "facts": ["medication.home.3fa2...", ...], # memory facts the answer states, in order
     "withheld": false,                         # the persona held back its critical fact here
     "persona": {"health_literacy": ..., "adherence": ..., "anxiety_level": ..., "info_completeness": ...}}

Every clinical statement in ``answer`` is the rendering of one listed fact (see
:mod:`scenarios.patient.render`); the rest is connective or worry wording with no clinical
content. Nothing is random: the same inputs give the same answer. ``facts``, ``withheld`` and
``persona`` are for generation and review; :func:`public_view` is what a model under test sees.

A gold step also keeps ``answer_zh``: the generator asks the same question in Chinese and stores
that answer's text next to ``answer`` (``scenarios.generation.common``), so that evaluation replays
the patient in the run's language (``evaluation.replay``). :func:`public_view` never shows it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from scenarios.patient.facts import Fact, HealthMemory
from scenarios.patient.persona import Persona
from scenarios.patient.render import medication_list, sentence
from scenarios.patient.select import select_facts

# Where a stored patient answer keeps its Chinese text: ``answer_zh`` (the generator's gold) or
# ``text_zh`` (accepted from a patient module that answers in both languages at once).
CHINESE_TEXT_KEYS = ("answer_zh", "text_zh")

PATIENT_TOOLS = (
    "patient.get_symptom_history",
    "patient.get_medication_adherence",
    "patient.get_social_history",
    "patient.get_functional_status",
    "patient.get_pain_assessment",
)
_WORRY = {
    "en": {
        "high": (
            ("Honestly, I'm really scared, doctor.", "I've been so worried about all this."),
            ("Is it something serious?", "Should I be worried?"),
        ),
        "medium": ((), ("I hope it's nothing serious.", "I'm a little worried, to be honest.")),
    },
    "zh": {
        "high": (("医生，说实话我真的很害怕。", "这些天我一直特别担心。"), ("是不是很严重啊？", "我是不是该担心？")),
        "medium": ((), ("希望不是什么大问题。", "说实话我有点担心。")),
    },
}
_LOW_LITERACY = {"en": "I don't know the medical words, but here goes.", "zh": "医学上的词我不太懂，我就这么说吧。"}
_NOTHING = {
    "en": ("I don't really know anything about that.", "I can't tell you anything about that, sorry."),
    "zh": ("这个我不太清楚。", "这个我说不上来，不好意思。"),
}
_NOT_MY_DRUG = {"en": "That's not one of the medicines I know I take.", "zh": "据我所知，我没有在用这种药。"}
_MORE = {"en": "That's about all I can remember.", "zh": "我就记得这些。"}


def normalise_language(language: str | None) -> str:
    return "zh" if (language or "en").strip().lower().startswith("zh") else "en"


def _pick(options: tuple[str, ...], *, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return options[digest[0] % len(options)]


def _triggered(*, persona: Persona, arguments: dict[str, Any]) -> bool:
    asked = " ".join(str(v) for k, v in sorted(arguments.items()) if k not in ("session_id", "subject_id"))
    asked = asked.casefold()
    # Latin triggers need 3+ letters (no accidental hits); one Chinese character can be a word (忘).
    return any(t.casefold() in asked for t in persona.critical_triggers if len(t) >= 3 or not t.isascii())


def _overlaps(a: Fact, b: Fact) -> bool:
    sa, sb = a.source, b.source
    if sa.kind != "note" or sb.kind != "note" or sa.key != sb.key or None in (sa.start, sb.start):
        return a.id == b.id
    return sa.start < sb.end and sb.start < sa.end


def _dedupe_spans(facts: list[Fact]) -> list[Fact]:
    """Say each stretch of the record once (a pain score inside the severity line, support = living)."""
    out: list[Fact] = []
    for fact in facts:
        if not any(_overlaps(fact, kept) for kept in out):
            out.append(fact)
    return out


def answer_patient_tool(
    *, tool: str, arguments: dict[str, Any], memory: HealthMemory, persona: Persona, language: str
) -> dict[str, Any]:
    if tool not in PATIENT_TOOLS:
        raise ValueError(f"{tool!r} is not a patient tool (expected one of {', '.join(PATIENT_TOOLS)})")
    lang = normalise_language(language)
    args = {k: v for k, v in arguments.items() if v is not None and v != ""}
    selection = select_facts(tool=tool, arguments=args, memory=memory)
    facts = list(selection.facts)
    withheld = False
    critical = memory.by_id(persona.critical_fact_id) if persona.critical_fact_id else None
    if persona.info_completeness == "critical_withheld" and critical is not None:
        if _triggered(persona=persona, arguments=args):
            if all(f.id != critical.id for f in facts) and tool == "patient.get_medication_adherence":
                facts.append(critical)  # named the drug: the patient now tells it
        elif any(_overlaps(f, critical) for f in facts):
            facts = [f for f in facts if not _overlaps(f, critical)]
            withheld = True
    trimmed = False
    if persona.info_completeness == "partial":
        keep = _partial(tool=tool, facts=facts, critical=critical)
        trimmed = len(keep) < len(facts)
        facts = keep
    facts = _dedupe_spans(facts)
    key = json.dumps([tool, args, persona.seed, lang], sort_keys=True, ensure_ascii=False, default=str)
    body = _body(facts=facts, lang=lang, literacy=persona.health_literacy)
    if not facts:
        body = [_NOT_MY_DRUG[lang] if selection.unknown_drug else _pick(_NOTHING[lang], key=key)]
    elif trimmed:
        body.append(_MORE[lang])
    if persona.health_literacy == "low" and facts:
        body.insert(0, _LOW_LITERACY[lang])
    worry = _WORRY[lang].get(persona.anxiety_level)
    if worry:
        prefixes, suffixes = worry
        if prefixes:
            body.insert(0, _pick(prefixes, key=key + "|pre"))
        body.append(_pick(suffixes, key=key + "|post"))
    return {
        "resourceType": "PatientAnswer",
        "tool": tool,
        "language": lang,
        "answer": ("" if lang == "zh" else " ").join(body),
        "facts": [f.id for f in facts],
        "withheld": withheld,
        "persona": persona.persona_config(),
    }


def _partial(*, tool: str, facts: list[Fact], critical: Fact | None) -> list[Fact]:
    """A partly forthcoming patient: the core of each answer only."""
    core = {
        "patient.get_symptom_history": {"chief_complaint", "onset", "location", "character", "severity"},
        "patient.get_pain_assessment": {"location", "severity", "score", "charted_latest", "character"},
    }.get(tool)
    if core is not None:
        return [f for f in facts if f.slot in core or f.category == "chief_complaint"]
    if tool == "patient.get_medication_adherence":
        meds = [f for f in facts if f.category == "medication" and f.slot in ("home", "inpatient")]
        rest = [f for f in facts if f.category == "adherence" or (critical is not None and f.id == critical.id)]
        return [f for f in facts if f in meds[:3] or f in rest]
    return facts[:2]


def _body(*, facts: list[Fact], lang: str, literacy: str) -> list[str]:
    out: list[str] = []
    meds = [f for f in facts if f.category == "medication" and f.slot in ("home", "inpatient")]
    done: set[str] = set()
    for fact in facts:
        if fact.id in done:
            continue
        if fact in meds:
            group = [f for f in meds if f.slot == fact.slot]
            out.append(medication_list(group, language=lang, literacy=literacy, inpatient=fact.slot == "inpatient"))
            done.update(f.id for f in group)
            continue
        out.append(sentence(fact, language=lang, literacy=literacy))
        done.add(fact.id)
    return out


def public_view(answer: dict[str, Any]) -> dict[str, Any]:
    """What the assistant under test is shown: the patient's words only."""
    return {"resourceType": "PatientAnswer", "language": answer["language"], "answer": answer["answer"]}
