"""How an answer is matched against a machine-checkable rubric form (:mod:`scenarios.rubric_checks`): the
text checks the ``rules`` judge scores with (:mod:`evaluation.judges.rules`) and the generator's
``self_rubric`` gate runs on gold answers, so both read an answer the same way.

Each check returns ``(passed, reason)``; the reason is written for a physician (phrases quoted “so”), in
English as stored, from :mod:`scenarios.rubric_reasons` (which shows it in the UI language).
"""

from __future__ import annotations

import re
from typing import Any

from scenarios.rubric_reasons import reason

# Not \w before the number: in Chinese a number follows a character directly ("肌酐0.9 mg/dL").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d+(?:[.,]\d+)?")
_UNIT_WINDOW = 6
_SENTENCE_END = re.compile(r"[。；;！？!?\n]|\.(?=\s|$)")
_CLAUSE_END = re.compile(r"[.;!?\n。；！？:：]")
_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|avoid|avoiding|without|against|instead of|rather than|contraindicated|don't|do not|"
    r"should not|shouldn't|hold off)\b",
    re.IGNORECASE,
)
_NEGATION_ZH = re.compile(r"不|勿|避免|禁|无需|未|别")
# Negation after the phrase, in the same clause ("NSAIDs should be avoided", "加量不可取").
_NEGATED_AFTER = re.compile(
    r"^[^.;!?\n。；！？]{0,40}?(?:\b(?:is|are|would be|should be|must be)\s+(?:not|never|avoided|contraindicated)\b"
    r"|\bnot\s+(?:recommended|advised|indicated|needed|necessary|appropriate|warranted)\b"
    r"|\bshould\s+(?:not|be avoided)\b|\bis\s+unsafe\b)"
    r"|^[^。；！？\n]{0,12}?(?:不宜|不建议|不推荐|不需要|无需|应避免|需避免|禁用|不可取|不应|不必)",
    re.IGNORECASE,
)


def squash(text: str) -> str:
    return "".join(str(text).lower().split())


def _decimals(value: float) -> int:
    text = repr(float(value))
    return len(text.split(".")[1].rstrip("0")) if "." in text and "e" not in text else 0


def _close(number: float, value: float, tolerance: float, places: int) -> bool:
    if tolerance > 0:
        return abs(number - value) <= tolerance
    return round(number, places) == round(value, places)


def _sentence(text: str, start: int, end: int) -> str:
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _SENTENCE_END.finditer(text, end)), len(text))
    return text[left:right]


# The release's Chinese text translates units ("5毫克", semantics file §3): the same unit for a value check.
_UNIT_ZH = {
    "mg": ("毫克",),
    "mcg": ("微克", "μg", "ug"),
    "g": ("克",),
    "ml": ("毫升",),
    "unit": ("单位",),
    "units": ("单位",),
    "meq": ("毫当量",),
    "mmol/l": ("毫摩尔/升",),
    "meq/l": ("毫当量/升",),
}


def _unit_at(text: str, keys: tuple[str, ...]) -> bool:
    return any(text.startswith(k) for k in keys)


def check_value_unit(*, answer: str, value: float, unit: str, tolerance: float = 0) -> tuple[bool, str]:
    unit_key = squash(unit)
    keys = (unit_key, *_UNIT_ZH.get(unit_key, ()))
    places = _decimals(value)
    for match in _NUMBER.finditer(answer):
        number = float(match.group().replace(",", "."))
        # A change may be written signed ("-1.4 mEq/L") while the rubric states its size.
        if not (_close(number, value, tolerance, places) or _close(abs(number), abs(value), tolerance, places)):
            continue
        if not unit_key:
            return True, reason("found", number=match.group())
        after = squash(answer[match.end() : match.end() + len(unit) + _UNIT_WINDOW])
        if _unit_at(after, keys):
            return True, reason("found_with_unit", number=match.group(), unit=unit)
        # A list of values whose unit is stated once in the same sentence ("Potassium (mEq/L): 5.4, 5.3").
        if unit_key in squash(_sentence(answer, match.start(), match.end())):
            return True, reason("found_in_sentence", number=match.group(), unit=unit)
    return False, reason("value_missing", value=value, unit=unit, tolerance=tolerance)


def quoted(phrases: list[str]) -> str:
    """Phrases as a physician reads them (“a”, “b”), not a Python list repr."""
    return ", ".join(f"“{p}”" for p in phrases)


def params_text(params: dict[str, Any]) -> str:
    return "; ".join(f"{name} = {quoted([v]) if isinstance(v, str) else v}" for name, v in params.items())


def check_term(*, answer: str, phrases: list[str]) -> tuple[bool, str]:
    low = answer.lower()
    for phrase in phrases:
        if phrase.lower() in low:
            return True, reason("mentions", phrase=quoted([phrase]))
    return False, reason("mentions_none", phrases=quoted(phrases))


def _negated(text: str, start: int) -> bool:
    clause_start = 0
    for match in _CLAUSE_END.finditer(text, 0, start):
        clause_start = match.end()
    before = text[clause_start:start]
    return bool(_NEGATION_EN.search(before) or _NEGATION_ZH.search(before))


def check_must_not_recommend(*, answer: str, phrases: list[str]) -> tuple[bool, str]:
    low = answer.lower()
    for phrase in phrases:
        needle = phrase.lower()
        for match in re.finditer(re.escape(needle), low):
            if not _negated(low, match.start()) and not _NEGATED_AFTER.search(low[match.end() :]):
                return False, reason("recommends", phrase=quoted([phrase]))
    return True, reason("recommends_none")
