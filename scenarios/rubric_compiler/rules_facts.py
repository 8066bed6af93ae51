"""Rules for stated facts: a value with its unit, a date, a named entity (with EN/ZH synonyms), a status word.

Each returns a :class:`Candidate`, a :class:`Skip` (the pattern applies but the item says more than one
check can verify), or None (the pattern does not apply).
"""

from __future__ import annotations

import re

from scenarios.rubric_compiler import lexicon
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.types import Candidate, Skip
from scenarios.rubric_compiler.verbs import is_mention, lead_en, lead_zh

_COMPARISON_EN = re.compile(
    r"\b(?:above|below|over|under|greater|less|more|fewer|exceeds?|exceeding|at least|at most|up to|than)\s*$"
    r"|[<>≥≤]\s*$",
    re.IGNORECASE,
)
_COMPARISON_ZH = re.compile(r"(?:高于|低于|超过|大于|小于|不足|达到|<|>|≥|≤)\s*$")
UNITLESS = {"age", "pain", "inr"}  # measured things stated without a unit
_THRESHOLD = re.compile(r"threshold|cut-?off|阈值|界值", re.IGNORECASE)
VALUE_FILLER_EN = frozenset(
    """
    as value level result dose threshold calculated calculation obtained measured measuring reading
    was were at around approximately about roughly per mg/dl estimated score
    """.split()  # noqa: SIM905
)
# An age is written "78 years (old)" / "78岁": the word is its unit (the check takes the number alone).
AGE_WORDS_EN = frozenset("years year old yo y/o year-old".split())  # noqa: SIM905
_AGE_AFTER = re.compile(r"\s*-?\s*(?:years?(?:\s*-?\s*old)?|y/?o\b|岁)", re.IGNORECASE)
GENERIC_EN = frozenset(
    """
    diagnosis diagnoses drug drugs medication medications medicine organism organisms pathogen allergy allergies
    symptom symptoms history finding findings cause culture cultures principal primary secondary main known
    underlying coded order orders status report reported reports prescribed home character nature type route
    """.split()  # noqa: SIM905
)
STATUS_FILLER_EN = frozenset(
    "reference range normal upper lower limit limits trend trending ref therapeutic target".split()  # noqa: SIM905
)
GENERIC_ZH = "诊断药物病原体过敏症状病史主要次要编码医嘱状态性质表现为情况家中血培养尿给药途径"
_INDICATION = re.compile(r"\bas the indication (?:for|of)\b|\bindication\b|适应[证症]", re.IGNORECASE)
_NEGATED_FINDING_EN = re.compile(r"(?:\bno|\bwithout|\babsence of|\bnegative for|\bdenies)\s+$", re.IGNORECASE)
_NEGATED_FINDING_ZH = re.compile(r"(?:无|未见|没有|否认)$")


def _verb_span(text: str, lang: str) -> list[tuple[int, int]]:
    _verb, end = lead_en(text) if lang == "en" else lead_zh(text)
    return [(0, end)]


def _residual(text: str, lang: str, spans: list[tuple[int, int]], extra_en: frozenset[str], extra_zh: str) -> str:
    if lang == "en":
        return " ".join(tx.residual_en(text, spans, extra_en))
    return tx.residual_zh(text, spans, extra_zh)


def value_rule(text: str, *, lang: str) -> Candidate | Skip | None:
    numbers = tx.values(text, lang=lang)
    if not numbers:
        return None
    if len(numbers) > 1:
        listed = ", ".join(f"{v.text} {v.unit}".strip() for v in numbers)
        return Skip("several values", f"states {len(numbers)} values ({listed}); a value check holds one")
    v = numbers[0]
    analytes = tx.analyte_keys(text)
    unitless_ok = bool(analytes & UNITLESS) or v.unit == "/10" or bool(_AGE_AFTER.match(text, v.end))
    if not v.unit and not unitless_ok:
        return Skip("no unit", f"the number {v.text} has no unit and names no age or score")
    before = text[: v.start]
    comparison = _COMPARISON_EN if lang == "en" else _COMPARISON_ZH
    if comparison.search(before) and not _THRESHOLD.search(text):
        return Skip("comparison", f"compares against {v.text} {v.unit}: that is a claim, not a stated value")
    spans = [*_verb_span(text, lang), (v.start, v.end), *tx.analyte_cover(text)]
    drugs = lexicon.find(text, lang=lang, kinds=("drug", "drug_class"))
    if len(lexicon.distinct(drugs)) == 1:
        spans += [(f.start, f.end) for f in drugs]  # the drug whose dose it is
    age = not v.unit and ("age" in analytes or bool(_AGE_AFTER.match(text, v.end)))
    filler_en = VALUE_FILLER_EN | GENERIC_EN | (AGE_WORDS_EN if age else frozenset())
    filler_zh = "剂量阈值使用计算得出约左右" + ("岁周" if age else "")
    rest = _residual(text, lang, spans, filler_en, filler_zh)
    if rest and (slot := _value_slot(text, lang, v)) is not None:
        # "cites <any lab> as <v> <unit>": the slot names what the value is of (the lexicon need not know it)
        rest = _residual(text, lang, [*spans, slot], filler_en, filler_zh)
    if rest:
        return Skip("partial", f"a check on {v.text} {v.unit} would miss: {rest}")
    unit = "" if age or ("age" in analytes and v.unit == "years") else v.unit
    # Exact to the decimals as written: 0.9 (or 3.0, whose zero the float loses) is ± half a last digit.
    decimals = len(v.text.split(".")[1]) if "." in v.text else 0
    tolerance = round(0.5 * 10**-decimals, decimals + 1) if decimals else 0
    check = {"kind": "value_unit", "value": v.value, "unit": unit, "tolerance": tolerance}
    shown = f"{v.text} {unit}".strip()
    return Candidate(check, "value_unit", 0.85, f"the answer must state {shown} (to the decimals written)")


def _value_slot(text: str, lang: str, v: tx.Value) -> tuple[int, int] | None:
    """The subject slot between a mention verb and the item's one value, when the value ends the item."""
    if not is_mention(text, lang=lang) or text[v.end :].strip(" .。;；") != "":
        return None
    _verb, end = lead_en(text) if lang == "en" else lead_zh(text)
    return tx.subject_slot(text, end, v.start, lang=lang)


def date_rule(text: str, *, lang: str) -> Candidate | Skip | None:
    found = tx.dates(text)
    if not found:
        return None
    if len(found) > 1 or tx.values(text, lang=lang):
        return Skip("partial", "states a date and other values; a check holds one")
    m = found[0]
    rest = _residual(
        text,
        lang,
        [*_verb_span(text, lang), (m.start(), m.end())],
        frozenset({"date", "time", "dated", "on"}),
        "日期时间于在",
    )
    if rest:
        return Skip("partial", f"a check on the date {m.group()} would miss: {rest}")
    day = m.group()[:10]
    return Candidate(
        {"kind": "term", "en": [day], "zh": [day]}, "term/date", 0.9, f"the answer must give the date {day}"
    )


def _negated_phrases(concept: lexicon.Concept) -> tuple[list[str], list[str]]:
    en = [f"{w} {p}" for p in concept.en[:3] for w in ("no", "without", "no evidence of", "negative for")]
    zh = [f"{w}{p}" for p in concept.zh[:3] for w in ("无", "未见", "没有", "无明显")]
    return en, zh


# "identifies <X> as the indication for <drug>" / ZH "指出<X>是<药>的适应证" (semantics file §3, the CR value items):
# the claim is X, whatever X is; the drug is context. X in words the lexicon does not know is checked as written
# (and the other language's wording of it); X the lexicon knows whole is checked with its synonyms.
_INDICATION_EN = re.compile(
    r"^(?:(?:that\s+)?(?:the\s+)?(?P<x>.+?)\s+(?:as|is|was)\s+(?:the\s+)?indication(?:\s+(?:for|of)\s+(?P<d>.+?))?"
    r"|(?:that\s+)?the\s+indication\s+(?:for|of)\s+(?P<d2>.+?)\s+(?:as|is|was)\s+(?P<x2>.+?))\s*[.]?\s*$",
    re.IGNORECASE,
)
_INDICATION_ZH = re.compile(
    r"^(?:(?P<x>.+?)(?:是|为|作为)(?:(?P<d>.+?)的)?(?:适应证|适应症)|(?P<d2>.+?)的(?:适应证|适应症)(?:是|为)(?P<x2>.+?))\s*[。.]?\s*$"
)
_INDICATION_STOP_EN = frozenset("and or but because given since not no than versus vs if when which that".split())  # noqa: SIM905


def _plain_indication(x: str, lang: str) -> bool:
    if lang == "en":
        words = x.split()
        return 0 < len(words) <= 6 and not any(w.lower() in _INDICATION_STOP_EN for w in words) and "," not in x
    return 0 < len(x) <= 15 and not re.search(r"[和与及并且或因而但，,、；;：:（）()]", x)


def indication_rule(text: str, *, lang: str) -> Candidate | None:
    if not is_mention(text, lang=lang):
        return None
    _verb, end = lead_en(text) if lang == "en" else lead_zh(text)
    m = (_INDICATION_EN if lang == "en" else _INDICATION_ZH).match(text[end:].strip())
    if not m:
        return None
    x, drug = (m.group("x") or m.group("x2") or "").strip(), (m.group("d") or m.group("d2") or "").strip()
    if not _plain_indication(x, lang) or (drug and tx.subject_slot(drug, 0, len(drug), lang=lang) is None):
        return None
    whole = [f for f in lexicon.find(x, lang=lang) if f.start == 0 and f.end == len(x)]
    if whole:
        concept = whole[0].concept
        en, zh = list(concept.en), list(concept.zh)
    else:
        en, zh = ([x], []) if lang == "en" else ([], [x])
    return Candidate(
        {"kind": "term", "en": en, "zh": zh},
        "term/indication",
        0.75,
        f"the answer must name {x} (the indication)",
    )


def term_rule(text: str, *, lang: str) -> Candidate | Skip | None:
    if not is_mention(text, lang=lang):
        return None
    if _INDICATION.search(text) and (found := indication_rule(text, lang=lang)) is not None:
        return found
    found = lexicon.find(text, lang=lang)
    entities = [f for f in found if f.concept.kind in lexicon.ENTITY_KINDS]
    statuses = [f for f in found if f.concept.kind == "status"]
    codes = list(tx.ICD.finditer(text)) if lang == "en" or re.search(r"[A-Z]\d", text) else []
    concepts = lexicon.distinct(entities)
    context: list[tuple[int, int]] = []
    drugs = [c for c in concepts if c.kind in ("drug", "drug_class")]
    if not codes and _INDICATION.search(text) and len(drugs) <= 1 and len(concepts) - len(drugs) == 1:
        # "identifies <diagnosis> as the indication (for <drug>)": the claim is the diagnosis; the drug is context
        entities = [f for f in entities if f.concept.kind not in ("drug", "drug_class")]
        context = [(f.start, f.end) for f in found if f.concept.kind in ("drug", "drug_class")]
        context += [m.span() for m in _INDICATION.finditer(text)]
        concepts = [c for c in concepts if c.kind not in ("drug", "drug_class")]
    if len(concepts) + (1 if codes else 0) > 1 or (concepts and statuses):
        named = ", ".join([c.name for c in concepts] + [m.group() for m in codes] + [s.phrase for s in statuses])
        return Skip("several facts", f"names several things ({named}); a term check passes on any one of them")
    spans = _verb_span(text, lang) + tx.analyte_cover(text) + context
    if codes:
        spans += [(m.start(), m.end()) for m in codes]
        rest = _residual(text, lang, spans, GENERIC_EN | {"code", "icd", "icd-10"}, GENERIC_ZH + "代码编码")
        if rest:
            return Skip("partial", f"a check on {codes[0].group()} would miss: {rest}")
        code = codes[0].group()
        return Candidate(
            {"kind": "term", "en": [code], "zh": [code]}, "term/code", 0.85, f"the answer must give {code}"
        )
    if concepts:
        concept = concepts[0]
        spans += [(f.start, f.end) for f in entities]
        negated_re = _NEGATED_FINDING_EN if lang == "en" else _NEGATED_FINDING_ZH
        first = entities[0]
        negated = negated_re.search(text[: first.start])
        if negated:
            spans.append((negated.start(), negated.end()))
        rest = _residual(text, lang, spans, GENERIC_EN, GENERIC_ZH)
        if rest:
            return Skip("partial", f"a check on {concept.name!r} would miss: {rest}")
        if negated:
            en, zh = _negated_phrases(concept)
            return Candidate(
                {"kind": "term", "en": en, "zh": zh},
                "term/absent",
                0.7,
                f"the answer must say there is no {concept.name}",
            )
        return Candidate(
            {"kind": "term", "en": list(concept.en), "zh": list(concept.zh)},
            f"term/{concept.kind}",
            0.8,
            f"the answer must name {concept.name} (or a synonym, EN or ZH)",
        )
    if statuses:
        status = lexicon.distinct(statuses)
        if len(status) > 1:
            return Skip("several facts", "names several statuses")
        spans += [(f.start, f.end) for f in statuses]
        rest = _residual(text, lang, spans, GENERIC_EN | STATUS_FILLER_EN, GENERIC_ZH + "参考范围于超出治疗目标")
        if rest:
            return Skip("partial", f"a check on {status[0].name!r} would miss: {rest}")
        concept = status[0]
        return Candidate(
            {"kind": "term", "en": list(concept.en), "zh": list(concept.zh)},
            "term/status",
            0.65,
            f"the answer must call it {concept.name} (or a synonym)",
        )
    return None
