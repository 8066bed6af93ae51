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
    if lang == "zh":
        for zh, unit in lexicon.units_zh().items():
            if stripped.startswith(zh):
                return unit, offset + len(zh)
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
