"""Text helpers of the rubric compiler: dates, values with units, and what an item says beyond a check.

The *residual* of an item is its wording once the verb, the span a check covers and filler words are
taken out. A residual that still carries a fact (a number, a drug, a route, a content word) means the
check would verify only part of the item, so the compiler leaves such an item unscored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scenarios.rubric_compiler import lexicon

DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?(?!\d)")
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d+(?:\.\d+)?")  # not \w: Chinese text runs into numbers
ICD = re.compile(r"(?<![A-Za-z0-9])[A-TV-Z]\d{2}(?:\.\d{1,4})?(?![A-Za-z0-9])")

# Words that carry no fact of their own in a rubric item (EN, lower case).
FILLER_EN = frozenset(
    """
    a an the of as is are was be being it its this that these those to in on at for with by from and or
    patient patient's patients current currently most recent latest last value values level levels result
    results reading measured serum blood its their his her correctly clearly explicitly accurately
    correct right record recorded chart charted admission baseline both also still now today name
    named there any
    """.split()  # noqa: SIM905
)
FILLER_ZH = "的了为是其该本次患者目前当前最近最新一次结果数值值水平：:，,。.、（）() 正确地明确在仍"  # 在/仍: in, still


@dataclass(frozen=True)
class Value:
    value: float
    text: str
    unit: str  # as charted ('' when unitless)
    start: int
    end: int


def _float(text: str) -> float:
    return float(text)


def dates(text: str) -> list[re.Match[str]]:
    return list(DATE.finditer(text))


# A laboratory unit the tables do not list is still a unit by its form (issue 33: the release cites any lab the
# EHR has, "… as 78 fL", "… 0.2 uIU/mL"): an SI prefix on a base quantity, optionally per another such quantity
# or per a time. Words ("days", "times", "given") are not of this form.
_PREFIX = r"(?:m|u|µ|μ|n|p|f|k|K|d|c)"
_BASE = r"(?:g|L|l|mol|Eq|eq|IU|U|m)"
_PER = rf"(?:{_PREFIX}?{_BASE}|min|hr|h|day|d|kg|m2|hpf|HPF|uL|mL)"
_UNIT_FORM = re.compile(rf"(?:{_PREFIX}?(?:g|L|mol|Eq|IU|U)|{_PREFIX}m)(?:/(?:\d+(?:\.\d+)?)?{_PER})*(?![A-Za-z0-9/])")


# A unit a translation spells out in Chinese (semantics file §3: the release's ZH items translate units), composed
# of a prefix and a base per another (国际单位/升 = IU/L, 微摩尔/升 = umol/L, 纳克/毫升 = ng/mL): read by its parts,
# so units no table lists still agree with the English wording.
_PREFIX_ZH = {"毫": "m", "微": "u", "纳": "n", "皮": "p", "千": "k", "飞": "f", "分": "d", "厘": "c"}
_BASE_ZH = {"国际单位": "IU", "单位": "U", "摩尔": "mol", "当量": "Eq", "克": "g", "升": "L"}
_PER_ZH = {**{f"{p}{b}": f"{pe}{be}" for p, pe in _PREFIX_ZH.items() for b, be in _BASE_ZH.items()}, **_BASE_ZH}
_PER_ZH.update({"分钟": "min", "小时": "hr", "天": "day", "日": "day"})
_DEN_ZH = "|".join(sorted(_PER_ZH, key=len, reverse=True))
_UNIT_ZH_COMPOSED = re.compile(rf"(?P<num>(?:{'|'.join(_PREFIX_ZH)})?(?:{'|'.join(_BASE_ZH)}))/(?P<den>{_DEN_ZH})")


def _unit_zh_composed(text: str) -> tuple[str, int] | None:
    """(unit as charted, length) of a composed Chinese unit at the start of ``text``, or None."""
    m = _UNIT_ZH_COMPOSED.match(text)
    if not m:
        return None
    num = m.group("num")
    head = _PREFIX_ZH.get(num[0], "") if num[0] in _PREFIX_ZH and num[1:] in _BASE_ZH else ""
    base = _BASE_ZH[num[1:]] if head else _BASE_ZH.get(num)
    if base is None:
        return None
    return f"{head}{base}/{_PER_ZH[m.group('den')]}", m.end()


def _unit_at(text: str, pos: int, lang: str) -> tuple[str, int] | None:
    """The unit starting at ``pos`` (after optional spaces): (unit as charted, end) or None."""
    rest = text[pos:]
    stripped = rest.lstrip()
    offset = pos + len(rest) - len(stripped)
    for unit in lexicon.units():
        if stripped[: len(unit)].casefold() == unit.casefold():
            end = offset + len(unit)
            nxt = text[end : end + 1]
            if unit[-1:].isalpha() and nxt.isascii() and nxt.isalpha():
                continue  # 'mg' of 'mgs', 'g' of 'given'
            return unit, end
    if lang == "zh" and (composed := _unit_zh_composed(stripped)):
        return composed[0], offset + composed[1]
    if lang == "zh":
        for zh, unit in lexicon.units_zh().items():
            if stripped.startswith(zh):
                return unit, offset + len(zh)
    if m := _UNIT_FORM.match(stripped):
        return m.group(), offset + m.end()
    return None


def values(text: str, *, lang: str) -> list[Value]:
    """Numbers of an item with the unit written right after them; dates and ICD codes are not values."""
    masked = text
    for m in [*DATE.finditer(text), *ICD.finditer(text)]:
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
    out: list[Value] = []
    for m in NUMBER.finditer(masked):
        if out and m.start() < out[-1].end:
            continue  # the 10 of '6/10'
        if masked[m.end() : m.end() + 1] == "/" and masked[m.end() + 1 : m.end() + 3] == "10":
            out.append(Value(_float(m.group()), m.group(), "/10", m.start(), m.end() + 3))
            continue
        found = _unit_at(masked, m.end(), lang)
        unit, end = found if found else ("", m.end())
        out.append(Value(_float(m.group()), m.group(), unit, m.start(), end))
    return out


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    keep = []
    pos = 0
    for start, end in sorted(spans):
        if start >= pos:
            keep.append(text[pos:start])
            pos = end
        else:
            pos = max(pos, end)
    keep.append(text[pos:])
    return " ".join(keep)


def residual_en(text: str, spans: list[tuple[int, int]], extra_filler: frozenset[str] = frozenset()) -> list[str]:
    """Content words of ``text`` outside ``spans`` (lower case), filler removed."""
    rest = _cut(text, spans)
    words = re.findall(r"[A-Za-z][A-Za-z'/-]*|\d+(?:\.\d+)?", rest)
    return [w for w in (w.lower().strip("'") for w in words) if w and w not in FILLER_EN and w not in extra_filler]


def residual_zh(text: str, spans: list[tuple[int, int]], extra_filler: str = "") -> str:
    rest = _cut(text, spans)
    return "".join(ch for ch in rest if ch not in FILLER_ZH and ch not in extra_filler and not ch.isspace())


def analyte_cover(text: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _key in lexicon.analyte_spans(text)]


def analyte_keys(text: str) -> set[str]:
    return {key for _s, _e, key in lexicon.analyte_spans(text)}


# The subject slot of an item ("cites <X> as 62 umol/L", "interprets <X> as within the normal range", ZH
# "引用了<X>值为…", "将<X>解读为…"): the release names any lab or measure there (semantics file §3), so a plain
# noun phrase in the slot is what the value or status is *of* — context, not a second claim. A slot that holds
# a conjunction, a preposition of a clause, a status or a comparison is not plain: the item says more.
_SLOT_STOP_EN = frozenset(
    """
    and or but nor with without because given since due after before while which who whom whose that than to for
    from into on in at by versus vs compared plus not no if when whether above below over under between within
    outside exceeding less more greater higher lower increased decreased elevated normal abnormal low high rising
    falling trend change changes changed risk patient patients he she they it his her their since despite per
    should would must may might can could recommend recommends recommended
    """.split()  # noqa: SIM905
)
_SLOT_LEAD_EN = re.compile(
    r"^\s*(?:that\s+)?(?:(?:the|a|an|its|this|patient's|patients'|latest|most|recent|current|last|measured|serum"
    r"|plasma|blood)\s+)*",
    re.IGNORECASE,
)
_SLOT_TAIL_EN = re.compile(
    r"\s*(?:(?:value|level|result|reading|concentration|measurement)s?\s*)?"
    r"(?:\b(?:as|of|is|was|are|were|at|equal to|to be|reported as)\b|[=:])?\s*$",
    re.IGNORECASE,
)
_SLOT_WORD_EN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9'+/().-]*$")
_SLOT_STOP_ZH = re.compile(
    r"[和与及并且或因由而但将把被比自从对较，,、；;。：:（）()]|偏高|偏低|升高|降低|正常|异常|高于|低于|超过|不足|患者|风险"
    r"|以来|之后|以后|之前|以前|期间|趋势|变化"
)
_SLOT_FACT_KINDS = ("route", "status", "diagnosis", "symptom", "finding", "organism")
_SLOT_TAIL_ZH = re.compile(r"(?:的)?(?:值|水平|结果|数值|浓度|读数)?(?:为|是|达|=|：|:)?\s*$")
_SLOT_LEAD_ZH = re.compile(r"^\s*(?:了)?(?:结论[：:，,]?\s*)?(?:该|患者的?|最近一次的?|最新的?|当前的?|目前的?|血清)*")


def subject_slot(text: str, start: int, end: int, *, lang: str) -> tuple[int, int] | None:
    """The span of a plain noun phrase filling ``text[start:end]`` (between the verb and the value or status),
    with articles, "value/level" and the copula around it; None when the slot says more than a name."""
    slot = text[start:end]
    lead = (_SLOT_LEAD_EN if lang == "en" else _SLOT_LEAD_ZH).match(slot)
    tail = (_SLOT_TAIL_EN if lang == "en" else _SLOT_TAIL_ZH).search(slot, lead.end())
    body = slot[lead.end() : tail.start() if tail else len(slot)].strip()
    if not body:
        return None
    if lang == "en":
        words = body.split()
        if len(words) > 5 or not all(_SLOT_WORD_EN.match(w) for w in words):
            return None
        if any(w.lower().strip("()") in _SLOT_STOP_EN for w in words) or DATE.search(body):
            return None
        if re.search(r"\d+(?:\.\d+)?\s*$", body) and not re.search(r"[A-Za-z]\d+$", body):
            return None  # a number of its own ("creatinine 0.9"), not a name like "HbA1c" or "B12"
    else:
        if len(body) > 15 or _SLOT_STOP_ZH.search(body) or DATE.search(body) or NUMBER.fullmatch(body):
            return None
    if lexicon.find(body, lang=lang, kinds=_SLOT_FACT_KINDS):
        return None  # a route, a status, a diagnosis … in the slot is a fact of its own ("口服羟考酮")
    return start, end


# A drug the lexicon does not know, in a slot the grammar reserves for a drug ("does NOT order <drug> <dose>",
# "no <drug> dose adjustment", ZH 未开具<药><剂量>): a plain name of one to three words (ZH: two to eight
# characters), no number, no function word, and nothing the lexicon reads as a concept of its own.
_NAME_STOP_EN = _SLOT_STOP_EN | frozenset(
    "the a an any dose doses dosing dosage drug drugs medication medications agent agents therapy its".split()  # noqa: SIM905
)


def plain_drug_name(name: str, *, lang: str) -> bool:
    name = name.strip()
    if lang == "en":
        words = name.split()
        if not 1 <= len(words) <= 3 or not all(re.fullmatch(r"[A-Za-z][A-Za-z-]*", w) for w in words):
            return False
        if any(w.lower() in _NAME_STOP_EN for w in words):
            return False
    elif (
        not re.fullmatch(r"[\u4e00-\u9fff]{2,8}", name)
        or _SLOT_STOP_ZH.search(name)
        or re.search(r"剂量|药物|类", name)
    ):
        return False
    return not lexicon.find(name, lang=lang) and not lexicon.analyte_spans(name)
