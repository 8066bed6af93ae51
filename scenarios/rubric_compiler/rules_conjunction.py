"""Items that state several values joined by "and" (the release's Data Gathering "each value cited", semantics
file §3) → an ``all_of`` check with one ``value_unit`` per stated value.

"The answer correctly cites potassium as 3.2 mEq/L and magnesium as 1.5 mg/dL", ZH "答案正确引用了血钾值为3.2
mEq/L，血镁值为1.5 mg/dL": the item is whole only when *every* value holds, so each coordinated part must compile
on its own (same verb, its own subject slot, nothing left over) to a value check, and all of them together are the
check. A part that does not (a status, a relation, a drug with its frequency, a comparison) leaves the whole item
unscored, as before: a check on some of the values is not a compiled item.
"""

from __future__ import annotations

import re

from scenarios.rubric_compiler import rules_facts, rules_status
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.types import Candidate
from scenarios.rubric_compiler.verbs import is_mention, lead_en, lead_zh

MAX_PARTS = 4
_SPLIT_EN = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)
_SPLIT_ZH = re.compile(r"\s*(?:[，,、；;]\s*(?:以及|和|及|与)?|以及|和|及|与)\s*")


def values_rule(text: str, *, lang: str) -> Candidate | None:
    """An ``all_of`` of value checks when the item coordinates 2–4 values, each a whole value item; else None."""
    numbers = tx.values(text, lang=lang)
    if not 2 <= len(numbers) <= MAX_PARTS or not is_mention(text, lang=lang):
        return None
    _verb, end = lead_en(text) if lang == "en" else lead_zh(text)
    body = text[end:].strip().rstrip(".。;；")
    parts = [p for p in (_SPLIT_EN if lang == "en" else _SPLIT_ZH).split(body) if p.strip()]
    if len(parts) != len(numbers):
        return None  # a part without a value (a status, a reason), or a part with two
    lead = text[:end].rstrip() + (" " if lang == "en" else "")
    checks = []
    for part in parts:
        found = rules_facts.value_rule(lead + part.strip(), lang=lang)
        if not isinstance(found, Candidate) or found.check["kind"] != "value_unit":
            return None
        checks.append(found.check)
    if len({(c["value"], c["unit"]) for c in checks}) != len(checks):
        return None
    shown = ", ".join(f"{c['value']:g} {c['unit']}".strip() for c in checks)
    return Candidate(
        {"kind": "all_of", "checks": checks},
        "all_of/values",
        0.8,
        f"the answer must state every value ({shown}), each to the decimals written",
    )


# A dose with its frequency ("cites the apixaban dose as 5 mg BID", ZH "引用了阿哌沙班剂量为5毫克 BID"): the dose and
# the frequency are both the item, so both are checked. Only frequencies whose wording no other frequency contains
# ("daily" is inside "twice daily", 每日 inside 每日两次) and that an answer cannot contain by accident ("bid" is
# inside "comorbidity": the phrases keep the space or bracket before it).
_FREQUENCIES: dict[str, tuple[str, list[str]]] = {
    "BID": (
        r"BID|b\.i\.d\.?|twice daily|twice a day|twice-daily|every 12 hours|q12h"
        r"|每日两次|每日2次|每天两次|一天两次|每12小时一次",
        [
            *(" bid", "(bid", "/bid", "克bid", "mgbid", "b.i.d", "twice daily", "twice a day", "twice-daily"),
            *("every 12 hours", "q12h", "每日两次", "每日2次", "每天两次", "一天两次", "每12小时"),
        ],
    ),
    "TID": (
        r"TID|t\.i\.d\.?|three times daily|three times a day|every 8 hours|q8h"
        r"|每日三次|每日3次|每天三次|一天三次|每8小时一次",
        [
            *(" tid", "(tid", "/tid", "克tid", "mgtid", "t.i.d", "three times daily", "three times a day"),
            *("every 8 hours", "q8h", "每日三次", "每日3次", "每天三次", "一天三次", "每8小时"),
        ],
    ),
}
_DOSE_UNITS = frozenset({"mg", "mcg", "g", "units", "UNIT", "mL", "mEq"})


def dose_frequency_rule(text: str, *, lang: str) -> Candidate | None:
    numbers = tx.values(text, lang=lang)
    if len(numbers) != 1 or numbers[0].unit not in _DOSE_UNITS or not is_mention(text, lang=lang):
        return None
    v = numbers[0]
    for name, (pattern, phrases) in _FREQUENCIES.items():
        m = re.match(rf"\s*(?:{pattern})(?![A-Za-z])", text[v.end :], re.IGNORECASE)
        if not m:
            continue
        found = rules_facts.value_rule(text[: v.end] + text[v.end + m.end() :], lang=lang)
        if not isinstance(found, Candidate) or found.check["kind"] != "value_unit":
            return None
        freq = {
            "kind": "term",
            "en": [p for p in phrases if p.isascii()],
            "zh": [p for p in phrases if not p.isascii()],
        }
        return Candidate(
            {"kind": "all_of", "checks": [found.check, freq]},
            "all_of/dose_frequency",
            0.8,
            f"the answer must state the dose {v.text} {v.unit} and the frequency {name}",
        )
    return None


# A value with its interpretation in one item ("cites hemoglobin as 9.8 g/dL, below the normal range", "cites the
# glucose of 182 mg/dL as elevated"; ZH "引用了血红蛋白值为9.8克/分升，低于正常范围", "…，并指出其偏高"): the release's
# Information Lookup asks for the value cited and interpreted (semantics file §3), and one sentence may hold both.
# Both are checkable, so the item compiles to ``all_of`` (the value, the range status) when nothing else is left.
_STATUS_LINK_EN = re.compile(
    r"(?:\s*[,;]\s*|\s+)(?:(?:which|that)\s+(?:is|was)\s+|i\.e\.\s*|as\s+|and\s+(?:interprets|identifies|notes)"
    r"\s+(?:it|this)\s+as\s+)?",
    re.IGNORECASE,
)
_STATUS_LINK_ZH = re.compile(r"(?:\s*[，,；;]\s*)?(?:并|且)?(?:指出|说明|注明|判断)?(?:其|该值|此值)?(?:为|属于|处于)?")


# "… as 320 IU/L (above the normal range of 30–200 IU/L)": the status in brackets with the range that defines it
_PAREN_TAIL = re.compile(r"\s*[(（](?P<inner>[^()（）]+)[)）]\s*[.。]?\s*$")
_RANGE_FILLER = re.compile(
    r"[\s,，:：;；–—~\-]*(?:(?:of|the|is|a|normal|reference|range|limits?|正常|参考|范围|值|为|在|内)[\s,，:：;；–—~\-]*)*",
    re.IGNORECASE,
)


def _bracketed_status(inner: str, lang: str) -> str | None:
    """The one range status a bracket states, when the rest of it is the reference range; else None."""
    patterns = rules_status.STATUS_PATTERNS_EN if lang == "en" else rules_status.STATUS_PATTERNS_ZH
    statuses = rules_status.status_spans(inner, patterns)
    if len(statuses) != 1:
        return None
    status, a, b = statuses[0]
    rest = inner[:a] + " " + inner[b:]
    numbers = tx.values(rest, lang=lang)
    if len(numbers) not in (0, 2):
        return None  # a range has two ends; anything else is another value
    for n in sorted(numbers, key=lambda n: -n.start):
        rest = rest[: n.start] + " " + rest[n.end :]
    return status if _RANGE_FILLER.fullmatch(rest) else None


def value_status_rule(text: str, *, lang: str) -> Candidate | None:
    """``all_of`` (value, range status) when a mention item states one value followed by its status; else None."""
    if (paren := _PAREN_TAIL.search(text)) and (status := _bracketed_status(paren.group("inner"), lang)):
        head = text[: paren.start()]
        numbers = tx.values(head, lang=lang)
        if len(numbers) != 1 or not numbers[0].unit or head[numbers[0].end :].strip():
            return None
        return _value_and_status(head, numbers[0], status, lang)
    numbers = tx.values(text, lang=lang)
    if len(numbers) != 1 or not numbers[0].unit or not is_mention(text, lang=lang):
        return None
    v = numbers[0]
    patterns = rules_status.STATUS_PATTERNS_EN if lang == "en" else rules_status.STATUS_PATTERNS_ZH
    statuses = rules_status.status_spans(text[v.end :], patterns)
    if len(statuses) != 1:
        return None
    status, start, end = statuses[0][0], v.end + statuses[0][1], v.end + statuses[0][2]
    if text[end:].strip(" .。;；") != "":
        return None  # something follows the status (a reason, a second claim): not this form
    if not (_STATUS_LINK_EN if lang == "en" else _STATUS_LINK_ZH).fullmatch(text[v.end : start]):
        return None  # words between the value and its status ("9.8 g/dL on admission, low"): not this form
    return _value_and_status(text[: v.end], v, status, lang)


def _value_and_status(head: str, v: tx.Value, status: str, lang: str) -> Candidate | None:
    if not is_mention(head, lang=lang):
        return None
    value = rules_facts.value_rule(head, lang=lang)
    if not isinstance(value, Candidate) or value.check["kind"] != "value_unit":
        return None
    en, zh = rules_status.STATUS_PHRASES[status]
    term = {"kind": "term", "en": list(en), "zh": list(zh)}
    return Candidate(
        {"kind": "all_of", "checks": [value.check, term]},
        "all_of/value_status",
        0.8,
        f"the answer must state {v.text} {v.unit} and call it {status} (as a clinician marks it)",
    )
