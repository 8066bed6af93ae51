"""Write/Update items in the release's prose style, checked against the turn's gold write call.

The shipped release generators write action rubrics in prose (semantics file §3): "The answer orders
<drug> at <dose> <frequency> for <indication>", "… specifies the route as oral and the frequency as
BID", "… documents <indication> as the indication"; ZH "答案开具阿哌沙班5毫克 BID用于心房颤动". Such an
item states the gold write call's arguments in words. It compiles to a ``write_call`` on exactly the
arguments it states, each found in the wording by the gold value or one of its synonyms (EN or ZH);
anything else left in the wording (a drug class "or equivalent", a dose range, a number the gold call
does not have, a justification) means the check would verify only part of it: unscored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ehr.fhir.legacy import upgrade_arguments
from scenarios.rubric_compiler import lexicon
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.rules_write import VALUE_SYNONYMS, _routes_zh
from scenarios.rubric_compiler.types import Candidate, Skip
from scenarios.rubric_compiler.verbs import ADVERBS_EN, ADVERBS_ZH, SUBJECT_EN, SUBJECT_ZH

_VERB_EN = re.compile(
    r"^\s*"
    + SUBJECT_EN
    + r"\s+"
    + ADVERBS_EN
    + r"(?:orders|re-?orders|prescribes|writes|places|creates|specifies|documents|records|sets|gives|uses|includes)\b",
    re.IGNORECASE,
)
_VERB_ZH = re.compile(
    r"^\s*" + SUBJECT_ZH + r"?" + ADVERBS_ZH + r"(?:开具|开立|下达|重新开具|指定|记录|设定|注明|写明|使用|给予"
    # "口服给予<药> …" (the translation of "gives <drug> oral …"): the route before the verb is an argument
    r"|(?=(?:口服|静脉|皮下|肌内|肌肉)(?:给予|注射|滴注|输注)))了?"
)
_FILLER_EN = frozenset(
    """
    at for of with as the a an and order orders ordered dose dosed dosing route frequency indication via by to is
    set new prescription medication request field call write in its their given taken administration administered
    """.split()  # noqa: SIM905
)
_FILLER_ZH = "开具用于的为和及给予药途径频次剂量适应证指征记录指定医嘱，、。新：:"
_ZH_UNITS = {"mg": "毫克", "mcg": "微克", "g": "克", "mL": "毫升", "units": "单位", "unit": "单位"}


def _synonyms(value: str) -> list[str]:
    low = value.strip().lower()
    out = [value]
    for canonical, words in VALUE_SYNONYMS.items():
        if low == canonical.lower() or low in words:
            out += [canonical, *words]
    for zh, en in _routes_zh().items():
        if en.lower() == low or low in (w.lower() for w in VALUE_SYNONYMS.get(en, ())):
            out.append(zh)
    for lang in ("en", "zh"):
        for concept in lexicon.distinct(lexicon.find(value, lang=lang)):
            out += [*concept.en, *concept.zh]
    words = re.findall(r"[A-Za-z]{4,}", value)
    if len(words) > 1:
        out.append(words[0])  # "Metoprolol tartrate" → "metoprolol"
    return sorted({o for o in out if o and o.strip()}, key=len, reverse=True)


def _dose_pattern(value: str) -> re.Pattern[str] | None:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*", value)
    if not m:
        return None
    units = [re.escape(m.group(2))] + ([_ZH_UNITS[m.group(2)]] if m.group(2) in _ZH_UNITS else [])
    return re.compile(rf"(?<![\d.]){re.escape(m.group(1))}\s*(?:{'|'.join(units)})(?![A-Za-z])", re.IGNORECASE)


def _find(text: str, param: str, value: Any, taken: list[tuple[int, int]]) -> tuple[int, int, str] | None:
    """Where the wording states ``param`` = gold ``value``: (start, end, expected value)."""
    if not isinstance(value, str) or not value.strip():
        if isinstance(value, int) and (m := re.search(rf"(?<!\d){value}\s*(?:days?|天)", text)):
            return m.start(), m.end(), value
        return None
    if param == "dose" and (pattern := _dose_pattern(value)):
        m = pattern.search(text)
        return (m.start(), m.end(), value) if m else None
    for phrase in _synonyms(value):
        ascii_phrase = phrase.isascii()
        body = re.escape(phrase).replace(r"\ ", r"[\s-]+")  # "twice daily" is also written "twice-daily"
        pattern = rf"(?<![A-Za-z]){body}(?![A-Za-z])" if ascii_phrase else re.escape(phrase)
        for m in re.finditer(pattern, text, re.IGNORECASE):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            # the expected value is what the gold call holds; a shorter name of it stays a substring check
            expected = phrase if ascii_phrase and phrase.lower() in value.lower() else value
            return m.start(), m.end(), expected
    return None


# Where a Chinese write item states the indication: "用于<X>" closing the item, "<X>为/作为适应证", "适应证为<X>".
_INDICATION_SLOT_ZH = re.compile(
    r"用于(?P<a>[^，,。；;、（）()]+?)\s*[。.]?\s*$|(?:记录|注明|写明|指定)了?(?P<b>[^，,。；;、（）()]+?)(?:为|作为)(?:适应证|适应症|用药指征)"
    r"|(?:适应证|适应症|用药指征)(?:为|是)(?P<c>[^，,。；;、（）()]+?)\s*[。.]?\s*$"
)


_ROUTE_VERBS_ZH = ("给药", "注射", "滴注", "输注", "推注", "用药", "途径")


def _inside_word_zh(text: str, end: int) -> bool:
    """A route word followed by more of a noun (静脉|血栓), not by an administration verb (静脉|给药)."""
    tail = text[end:]
    return bool(tail) and "\u4e00" <= tail[0] <= "\u9fff" and not tail.startswith(_ROUTE_VERBS_ZH)


def _indication_slot_zh(text: str, taken: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The span of the indication slot of a Chinese write item, when it holds a plain phrase that no other found
    argument overlaps, and every lexicon concept in it is the gold indication's (found as a synonym already)."""
    m = _INDICATION_SLOT_ZH.search(text)
    if not m:
        return None
    group = next(g for g in ("a", "b", "c") if m.group(g))
    start, end = m.span(group)
    inside = [sp for sp in taken if start <= sp[0] and sp[1] <= end]
    if any(a < end and start < b for a, b in taken if (a, b) not in inside) or len(m.group(group)) > 15:
        return None
    if re.search(r"[和与及并或因而但]", m.group(group)):
        return None  # more than one indication, or a reason: the slot says more
    # a status word inside a disease name ("射血分数降低的心力衰竭") describes the disease, it is no second claim
    # and so does a route word inside one (静脉 of 静脉血栓预防, the translation of "VTE prophylaxis")
    slot_text = m.group(group)
    known = [
        f
        for f in lexicon.find(slot_text, lang="zh")
        if f.concept.kind != "status" and not (f.concept.kind == "route" and _inside_word_zh(slot_text, f.end))
    ]
    covered = [(start + f.start, start + f.end) for f in known]
    if any(not any(a <= s and e <= b for a, b in inside) for s, e in covered):
        return None  # names a concept that is not the gold indication
    return start, end


# The drug slot of a Chinese write item: "开具<药>5毫克 …" (the translation of "orders <drug> at <dose>"), between
# the verb and the dose. A drug name the lexicon does not know is still the drug there when it is a plain name.
_DRUG_SLOT_STOP_ZH = re.compile(r"[和与及并或因而但将把，,、；;：:（）()/\d\s]|剂量|等效|类|或")


def _drug_slot_zh(text: str, verb_end: int, dose: tuple[int, int] | None, medication: Any) -> tuple[int, int] | None:
    """The span between the verb and the gold dose when it holds one plain name and no other drug or concept."""
    if dose is None or not isinstance(medication, str) or dose[0] <= verb_end:
        return None
    return _plain_name_zh(text, verb_end, dose[0])


def _given_slot_zh(text: str, spans: list[tuple[int, int]], medication: Any) -> tuple[int, int] | None:
    """ "口服给予<药> 每日一次" (no dose): the drug slot runs from 给予 to the next stated argument."""
    m = re.search(r"给予", text)
    if m is None or not isinstance(medication, str):
        return None
    after = [a for a, _b in spans if a >= m.end()]
    end = min(after) if after else len(text.rstrip("。. "))
    return _plain_name_zh(text, m.end(), len(text[:end].rstrip()))


def _plain_name_zh(text: str, start: int, end: int) -> tuple[int, int] | None:
    slot = text[start:end]
    if not 1 < len(slot) <= 12 or _DRUG_SLOT_STOP_ZH.search(slot) or re.search(r"[A-Za-z]", slot):
        return None
    if lexicon.find(slot, lang="zh"):
        return None  # a concept the lexicon knows (another drug, a route, a status) is not an unknown drug's name
    return start, end


# A bound on the dose ("orders <drug> at ≥40 mg daily", the release's prose Write/Update prompt; "at least", "up to",
# ZH ≥40毫克 / 40毫克以上): any dose past the bound passes it, so a check on the gold dose would be stricter than it.
_BOUND_BEFORE = re.compile(
    r"(?:≥|≤|>=|<=|>|<|\bat\s+least|\bat\s+most|\bup\s+to|\bno\s+(?:more|less)\s+than|\bminimum(?:\s+of)?"
    r"|\bmaximum(?:\s+of)?|\bover|\bunder|不少于|不低于|不超过|不高于|至少|最多|最高|最低|超过|大于|小于|高于|低于)\s*$",
    re.IGNORECASE,
)
_BOUND_AFTER = re.compile(
    r"^\s*(?:or\s+(?:more|higher|greater|less|lower|above|below)|and\s+(?:above|below)|\+|及以上|以上|以下|或以上|或更高|或更低|或更多)",
    re.IGNORECASE,
)


def _dose_bound(text: str, span: tuple[int, int]) -> str | None:
    """The bound word around the dose an item states, if any."""
    if m := _BOUND_BEFORE.search(text[max(0, span[0] - 16) : span[0]]):
        return m.group().strip()
    if m := _BOUND_AFTER.match(text[span[1] :]):
        return m.group().strip()
    return None


def prose_write_rule(
    text: str, *, lang: str, task_type: str, gold_writes: Sequence[tuple[str, dict[str, Any]]]
) -> Candidate | Skip | None:
    if task_type != "WU" or len(gold_writes) != 1:
        return None
    verb = (_VERB_EN if lang == "en" else _VERB_ZH).match(text)
    if not verb or "`" in text:
        return None  # the field style ("The `dose` field …") is rules_write's
    tool, raw = gold_writes[0]
    gold = upgrade_arguments(tool=tool, arguments=dict(raw or {}))[0]
    found: dict[str, Any] = {}
    spans: list[tuple[int, int]] = [verb.span()]
    where: dict[str, tuple[int, int]] = {}
    for param, value in gold.items():
        if param in ("subject_id", "session_id"):
            continue
        hit = _find(text, param, value, spans)
        if hit is not None:
            found[param] = hit[2]
            spans.append((hit[0], hit[1]))
            where[param] = (hit[0], hit[1])
    if (
        lang == "zh"
        and "medication" not in found
        and (slot := _drug_slot_zh(text, verb.end(), where.get("dose"), gold.get("medication")))
    ):
        # "开具别嘌醇100毫克 …": the name in the drug slot translates the gold medication (semantics file §3)
        spans.append(slot)
        found = {"medication": gold["medication"], **found}
    elif (
        lang == "zh"
        and "medication" not in found
        and found
        and (slot := _given_slot_zh(text, spans, gold.get("medication")))
    ):
        spans.append(slot)
        found = {"medication": gold["medication"], **found}
    if lang == "zh" and isinstance(gold.get("indication"), str) and (slot := _indication_slot_zh(text, spans)):
        # the Chinese wording translates the gold indication ("用于社区获得性肺炎"): its slot is the indication
        spans = [sp for sp in spans if not (slot[0] <= sp[0] and sp[1] <= slot[1])] + [slot]
        found["indication"] = gold["indication"]
    if not found:
        return None
    if "dose" in where and (bound := _dose_bound(text, where["dose"])):
        return Skip("comparison", f"states a bound on the dose ({bound!r}): a write_call check states one dose")
    if lang == "en":
        rest = " ".join(tx.residual_en(text, spans, _FILLER_EN))
    else:
        rest = tx.residual_zh(text, spans, _FILLER_ZH)
    if rest:
        return Skip("partial", f"a check on the write call's {', '.join(found)} would miss: {rest}")
    shown = "; ".join(f"{k} {v!r}" for k, v in found.items())
    return Candidate(
        {"kind": "write_call", "tool": tool, "params": found},
        "write_call/prose",
        0.85,
        f"{tool}: {shown} (stated in prose, confirmed by the gold call)",
    )
