"""Write/Update items → ``write_call`` checks on the released contract's parameters (ehr/fhir/definitions.py).

The wording names the tool and/or a parameter ("Dose is hold", "途径为口服", "Gives hyperkalemia as the
indication"); the value comes from the wording, mapped to the contract's terms (暂停 → hold, 口服 → PO),
and is confirmed against the turn's gold write call: a value the gold call does not contain is a
conflict a reviewer must see, so such an item is not compiled. A parameter named without a value takes
the gold call's value only when it is short and categorical (route, priority, ...), never free text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ehr.fhir import REGISTRY
from ehr.fhir.legacy import upgrade_arguments
from ehr.glossary import terms
from scenarios.rubric_compiler import lexicon
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.types import Candidate, Skip

WRITE_TOOL = re.compile(r"\b(MedicationRequest|ServiceRequest|Flag)\.create\b")
# Human words for the contract's parameters; "reason" is the tool's own alias (indication / note / detail).
PARAM_WORDS_EN: dict[str, tuple[str, ...]] = {
    "medication": ("medication", "drug"),
    "dose": ("dose", "dosage"),
    "route": ("route",),
    "frequency": ("frequency",),
    "indication": ("indication",),
    "reason": ("reason", "rationale"),
    "duration_days": ("duration", "duration_days"),
    "service_type": ("service_type", "service type", "service"),
    "priority": ("priority", "urgency"),
    "note": ("note",),
    "target_date": ("target_date", "target date"),
    "category": ("category",),
    "code": ("alert name", "flag name", "code"),
    "detail": ("alert text", "flag text", "detail"),
}
PARAM_WORDS_ZH: dict[str, tuple[str, ...]] = {
    "medication": ("药物", "药品"),
    "dose": ("剂量",),
    "route": ("给药途径", "途径"),
    "frequency": ("频次", "频率"),
    "indication": ("用药原因", "适应证", "指征"),
    "reason": ("原因", "理由"),
    "duration_days": ("疗程",),
    "service_type": ("申请项目", "检查项目"),
    "priority": ("紧急程度", "优先级"),
    "note": ("备注",),
    "target_date": ("执行日期", "计划日期"),
    "category": ("类别",),
    "code": ("警示名称",),
    "detail": ("警示内容",),
}
REASON_PARAM = {"MedicationRequest.create": "indication", "ServiceRequest.create": "note", "Flag.create": "detail"}
TOOL_OF_PARAM = {
    "medication": "MedicationRequest.create",
    "dose": "MedicationRequest.create",
    "route": "MedicationRequest.create",
    "frequency": "MedicationRequest.create",
    "indication": "MedicationRequest.create",
    "duration_days": "MedicationRequest.create",
    "service_type": "ServiceRequest.create",
    "priority": "ServiceRequest.create",
    "target_date": "ServiceRequest.create",
    "category": "Flag.create",
    "detail": "Flag.create",
}
# Parameters whose gold value may stand in when the wording names the parameter but not the value.
SHORT_PARAMS = ("dose", "route", "frequency", "priority", "category", "target_date", "medication")
VALUE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "hold": ("hold", "held", "on hold", "on-hold", "暂停", "暂停用药"),
    "PO": ("po", "oral", "orally", "by mouth", "口服"),
    "IV": ("iv", "intravenous", "intravenously", "静脉", "静脉注射"),
    "SC": ("sc", "subcutaneous", "subcutaneously", "皮下", "皮下注射"),
    "daily": ("daily", "once daily", "qd", "once a day", "每日", "每天", "每日一次", "一天一次"),
    "BID": ("bid", "twice daily", "twice a day", "每日两次", "一天两次", "每日2次"),
    "TID": ("tid", "three times daily", "每日三次", "一天三次", "每日3次"),
    "urgent": ("urgent", "紧急"),
    "routine": ("routine", "常规"),
    "asap": ("asap", "stat", "as soon as possible", "尽快", "立即"),
    "safety": ("safety", "安全"),
    "allergy": ("allergy", "过敏"),
    "clinical": ("clinical", "临床"),
    "administrative": ("administrative", "行政", "管理"),
}
_VALUE_AFTER = re.compile(
    r"(?:\bis|\bto|\bas|\bequals(?:\s+exactly)?|=|:|：|设为|为|是|等于)\s*['\"‘’“”]?(?P<v>[^'\"‘’“”()（）]+?)['\"‘’“”]?\s*(?:[(（][^)）]*[)）])?\s*[.。]?$"
)
_GIVES_AS = re.compile(
    r"\bgives\s+(?:the\s+)?(?P<v>.+?)\s+as\s+the\s+(?P<p>indication|reason|note|rationale)\b", re.IGNORECASE
)
_CALL_FOR = re.compile(r"\.create\s+(?:for|to order|ordering|with)\s+(?P<v>.+?)\s*[.]?$", re.IGNORECASE)
_CALL_FOR_ZH = re.compile(r"\.create\s*(?:开具|申请|为)?(?P<v>.+?)(?:医嘱|申请)?\s*$")
_REQUESTS = re.compile(r"^\s*(?:requests|orders)\s+(?:an?\s+|the\s+)?(?P<v>.+?)\s*[.]?$", re.IGNORECASE)
_EXCLUSIVE = re.compile(
    r"\bno other (?:write )?(?:tool|call)|\bonly (?:this|one) (?:write )?(?:tool|call)|没有调用其他|未调用其他", re.I
)
_PAREN = re.compile(r"[(（][^()（）]*[)）]")
_NEGATED_FIELD = re.compile(
    r"\bNOT\b|\bnever\b|[≥≤<>]|>=|<=|\bat (?:least|most)\b|不为|不是|不得|不应|不能|不超过|至少|以上|以下"
)
_SCHEDULE = re.compile(r"\bschedul\w*|安排在", re.IGNORECASE)
_NAMES_IN = re.compile(r"^\s*(?:names|mentions|includes|gives|states|writes)\s+(?P<v>.+?)\s+in\s+the\s+", re.IGNORECASE)
_NAMES_IN_ZH = re.compile(r"(?:中|里)(?:写明|注明|包含|提到|写出)(?P<v>.+?)\s*$")


def _squash(text: Any) -> str:
    return "".join(str(text).lower().split())


def _routes_zh() -> dict[str, str]:
    return {zh: en for en, zh in terms(kind="route").items()}


def mapped(value: str) -> list[str]:
    """Contract-term spellings of a worded value: synonyms, routes, concepts (first = preferred)."""
    low = value.strip().strip("'\"").lower()
    out = []
    for canonical, words in VALUE_SYNONYMS.items():
        if low in words:
            out.append(canonical)
    if value.strip() in _routes_zh():
        out.append(_routes_zh()[value.strip()])
    for lang in ("en", "zh"):
        for concept in lexicon.distinct(lexicon.find(value, lang=lang)):
            out += [e for e in concept.en if re.fullmatch(r"[\x00-\x7f]+", e)]
    if re.fullmatch(r"[\x00-\x7f]+", value.strip()):
        out.append(value.strip().strip("'\""))
    return list(dict.fromkeys(o for o in out if o))


def _param_words(text: str, lang: str) -> list[tuple[str, int]]:
    table = PARAM_WORDS_EN if lang == "en" else PARAM_WORDS_ZH
    found = []
    for param, words in table.items():
        for w in words:
            pattern = rf"(?<![A-Za-z_]){re.escape(w)}(?![A-Za-z_])" if lang == "en" else re.escape(w)
            if m := re.search(pattern, text, re.IGNORECASE):
                found.append((param, m.start()))
                break
    # Contract names in backquotes (the release's field style, "The `dose` field …", "`route`字段…").
    for m in re.finditer(r"`([a-z_]+)`", text):
        if m.group(1) in TOOL_OF_PARAM or m.group(1) in ("note", "code"):
            found.append((m.group(1), m.start()))
    # Contract names written in brackets ("（dose）") name the parameter in either language.
    for m in re.finditer(r"[(（]\s*([a-z_]+)\s*[)）]", text):
        if m.group(1) in TOOL_OF_PARAM or m.group(1) in ("note", "code"):
            found.append((m.group(1), m.start()))
    return sorted(set(found), key=lambda p: p[1])


def _gold(gold_writes: Sequence[tuple[str, dict[str, Any]]], tool: str | None) -> dict[str, Any] | None:
    calls = [(t, a) for t, a in gold_writes if tool is None or t == tool]
    if len(calls) != 1:
        return None
    name, arguments = calls[0]
    return upgrade_arguments(tool=name, arguments=dict(arguments or {}))[0]


def _choose(param: str, candidates: list[str], gold: dict[str, Any] | None) -> tuple[Any, str] | Skip:
    """(expected value, how it was found) for one parameter, or a Skip naming the conflict."""
    if gold is None:
        if not candidates:
            return Skip("no value", f"names the {param} but gives no value, and there is no gold write call")
        return candidates[0], "from the wording (no gold write call to confirm it)"
    given = gold.get(param)
    if given is None:
        return Skip("conflict", f"the gold write call has no {param}")
    if param == "duration_days":
        numbers = [c for c in candidates if re.fullmatch(r"\d+", c)]
        if numbers and int(numbers[0]) == given:
            return given, "from the wording, confirmed by the gold call"
    for c in candidates:
        if _squash(c) and _squash(c) in _squash(given):
            return c, "from the wording, confirmed by the gold call"
    if candidates:
        return Skip("conflict", f"the wording says {candidates[0]!r} but the gold call's {param} is {given!r}")
    if param in SHORT_PARAMS:
        return given, "the gold call's value (the wording names the parameter only)"
    return Skip("no value", f"names the {param} without a value; free text is judged by reading")


def _value_in(text: str, param: str, lang: str, start: int) -> list[str]:
    if param in ("indication", "reason", "note") and (m := _GIVES_AS.search(text)):
        return mapped(m.group("v"))
    if param == "target_date":
        found = tx.dates(text)
        return [found[0].group()[:10]] if found else []
    if m := (_NAMES_IN if lang == "en" else _NAMES_IN_ZH).search(text):
        return mapped(m.group("v"))
    if m := _VALUE_AFTER.search(text[start:]):
        return mapped(m.group("v"))
    bracket = re.search(r"[(（]\s*([^)）]+?)\s*[)）]", text[start:])
    if bracket and bracket.group(1) not in TOOL_OF_PARAM:
        return mapped(bracket.group(1))
    return []


def write_rule(
    text: str, *, lang: str, task_type: str, gold_writes: Sequence[tuple[str, dict[str, Any]]]
) -> Candidate | Skip | None:
    named = WRITE_TOOL.search(text)
    params = _param_words(text, lang)
    if _SCHEDULE.search(text) and tx.dates(text):
        params.append(("target_date", 0))
    requests = _REQUESTS.match(text) if lang == "en" else None
    if requests:
        params.append(("service_type", 0))
    if not named and not (task_type == "WU" and params):
        return None
    if _EXCLUSIVE.search(text):
        # "(no other write tool is called)" (the release's field-style first item): a write_call check finds the
        # call, it cannot tell that no other write was made
        return Skip("partial", "asks that no other write tool is called: a write_call check cannot verify that")
    if _NEGATED_FIELD.search(_PAREN.sub("", text)):
        # "Safety: the `dose` is NOT >= 500 mg" / "`dose`不为≥500 mg": a bound on a value, not a value
        return Skip("comparison", "bounds or negates a parameter's value: a write_call check states one value")
    gold_tools = sorted({t for t, _a in gold_writes})
    tool = f"{named.group(1)}.create" if named else None
    if tool is None:
        implied = sorted({TOOL_OF_PARAM[p] for p, _pos in params if p in TOOL_OF_PARAM})
        tool = gold_tools[0] if len(gold_tools) == 1 else (implied[0] if len(implied) == 1 else None)
    if tool is None:
        return Skip("no tool", "a write item, but neither the wording nor the gold calls tell which write tool")
    gold = _gold(gold_writes, tool)
    if gold_writes and gold is None:
        return Skip("conflict", f"the gold calls make no single {tool} call")
    contract = {p.name for p in REGISTRY[tool].params}
    expected: dict[str, Any] = {}
    notes = []
    for param, pos in params:
        param = REASON_PARAM[tool] if param == "reason" else param
        if param not in contract:
            return Skip("conflict", f"{tool} has no parameter {param}")
        if param == "service_type" and requests:
            candidates = mapped(requests.group("v"))
        else:
            candidates = _value_in(text, param, lang, pos)
        chosen = _choose(param, candidates, gold)
        if isinstance(chosen, Skip):
            return chosen
        expected[param], how = chosen
        notes.append(f"{param} {expected[param]!r} ({how})")
    if named and not params:
        obj = (_CALL_FOR if lang == "en" else _CALL_FOR_ZH).search(text)
        candidates = mapped(obj.group("v")) if obj and obj.group("v").strip() else []
        if candidates:  # an object the wording names (not any trailing words)
            param = "medication" if tool == "MedicationRequest.create" else "service_type"
            chosen = _choose(param, candidates, gold)
            if isinstance(chosen, Skip):
                return chosen
            if param in contract:
                expected[param], how = chosen
                notes.append(f"{param} {expected[param]!r} ({how})")
    check = {"kind": "write_call", "tool": tool, "params": expected}
    confidence = 0.9 if gold is not None else 0.6
    if any("parameter only" in n for n in notes):
        confidence = 0.7
    detail = "; ".join(notes) or "any parameters"
    return Candidate(check, "write_call/param" if expected else "write_call/tool", confidence, f"{tool}: {detail}")
