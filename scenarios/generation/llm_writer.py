"""The ``openai`` backend's writing step: the LLM's English texts for a turn, then their Chinese.

The writer (role ``generator``) sees the grounded skeleton of a turn (its planned request, the gold
tool calls with their observations, the derivations and the rubric checks) and writes the requests,
the gold answer and the rubric wording; the translator (role ``translator``) writes the Chinese.
Each answer is checked here before the gates run (numbers only from the observations, the rubric's
values and terms mentioned, the implicitness rules, nothing lost in translation), so that a re-ask
can fix it; a session gets LLM texts for every turn or none.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

from core.llm import UsageAccumulator
from ehr.fhir import TOOL_NAMES
from scenarios.generation.common import fmt
from scenarios.generation.gates import _grounding
from scenarios.generation.llm_json import ask_json, unusable
from scenarios.generation.llm_roles import LLMRoles
from scenarios.generation.numbers import as_decimal, numbers, units
from scenarios.generation.prompts import SUBTYPE_RULES_EN, SUBTYPE_RULES_ZH, TRANSLATOR, WRITER
from scenarios.generation.templates import AE_MARKERS_EN, AE_MARKERS_ZH, NA_PRONOUNS_EN, NA_PRONOUNS_ZH, PE_MAX_WORDS
from scenarios.generation.types import TASK_TYPES, GateFailure, SessionDraft, TurnDraft

OBSERVATION_MAX_CHARS = 8000  # per step in a prompt; the demo's largest observations are ~3k


def write_texts(
    *, skeleton: SessionDraft, llm: LLMRoles, usage: UsageAccumulator, max_reasks: int, salt: str = ""
) -> tuple[SessionDraft, list[GateFailure]]:
    """The skeleton with LLM texts in both languages, or the untouched skeleton and an ``llm_output`` failure.

    All-or-nothing per session: a draft never mixes LLM texts with rules texts.
    """
    draft = copy.deepcopy(skeleton)
    for turn in draft.turns:
        problem = _write_turn(draft=draft, turn=turn, llm=llm, usage=usage, max_reasks=max_reasks, salt=salt)
        if problem is not None:
            return skeleton, [GateFailure("llm_output", turn.index, problem)]
    return draft, []


def _write_turn(
    *, draft: SessionDraft, turn: TurnDraft, llm: LLMRoles, usage: UsageAccumulator, max_reasks: int, salt: str
) -> str | None:
    # Grounding pool before this turn's texts change: the planned requests, observations, derivations.
    pool = _grounding(draft, turn.index)
    items = [_planned_item(item) for item in turn.rubric]
    en = ask_json(
        client=llm.generator,
        prompt=WRITER,
        payload=_writer_payload(draft=draft, turn=turn, items=items),
        schema={"request_explicit": "str", "request_implicit": "str?", "answer": "str", "rubric": ("list", len(items))},
        validate=lambda data: _writer_problems(data=data, turn=turn, pool=pool, items=items),
        usage=usage,
        max_reasks=max_reasks,
        cache_salt=salt,
    )
    if en.data is None:
        return unusable(role="generator", answer=en)
    texts_en = {
        "request_explicit": en.data["request_explicit"].strip(),
        "request_implicit": (en.data.get("request_implicit") or "").strip() if turn.index else "",
        "answer": en.data["answer"].strip(),
        "rubric": [text.strip() for text in en.data["rubric"]],
    }
    if turn.index == 0:
        texts_en["request_implicit"] = texts_en["request_explicit"]
    zh_terms = _zh_terms(turn)
    zh = ask_json(
        client=llm.translator,
        prompt=TRANSLATOR,
        payload=_translator_payload(turn=turn, texts_en=texts_en, zh_terms=zh_terms),
        schema={"request_explicit": "str", "request_implicit": "str", "answer": "str", "rubric": ("list", len(items))},
        validate=lambda data: _translation_problems(data=data, texts_en=texts_en, turn=turn, zh_terms=zh_terms),
        usage=usage,
        max_reasks=max_reasks,
        cache_salt=salt,
    )
    if zh.data is None:
        return unusable(role="translator", answer=zh)
    turn.request_explicit_en, turn.request_implicit_en = texts_en["request_explicit"], texts_en["request_implicit"]
    turn.request_explicit_zh = zh.data["request_explicit"].strip()
    turn.request_implicit_zh = zh.data["request_implicit"].strip() if turn.index else turn.request_explicit_zh
    turn.answer_en, turn.answer_zh = texts_en["answer"], zh.data["answer"].strip()
    for item, text_en, text_zh in zip(turn.rubric, texts_en["rubric"], zh.data["rubric"], strict=True):
        item.text_en, item.text_zh = text_en, text_zh.strip()
    # The closing step's observation is the gold answer (released format).
    turn.steps[-1].observation = turn.answer_en
    return None


def _planned_item(item: Any) -> dict[str, Any]:
    check = item.check or {}
    must: list[str] = []
    if check.get("kind") == "value_unit":
        must.append(f"{fmt(check['value'])} {check.get('unit') or ''}".strip())
    elif check.get("kind") == "term" and check.get("en"):
        must.append(check["en"][0])
    return {"draft": item.text_en, "is_safety": item.is_safety, "must_mention": must, "check": item.check}


def _compact(observation: Any) -> Any:
    """An observation for a prompt: whole when small, else its JSON text cut (the cut is marked)."""
    text = observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False, default=str)
    if len(text) <= OBSERVATION_MAX_CHARS:
        return observation
    return text[:OBSERVATION_MAX_CHARS] + " …[truncated]"


def prompt_calls(turn: TurnDraft) -> list[dict[str, Any]]:
    """The turn's gold tool calls as the writer and the auditor see them (large observations cut)."""
    return [
        {"tool": s.tool, "arguments": s.arguments, "observation": _compact(s.observation)}
        for s in turn.steps
        if s.tool != "prepare_to_answer"
    ]


def _writer_payload(*, draft: SessionDraft, turn: TurnDraft, items: list[dict[str, Any]]) -> dict[str, Any]:
    rule = SUBTYPE_RULES_EN[turn.subtype].format(entity=turn.entity) if turn.subtype else None
    return {
        "session": {
            "scenario": draft.scenario,
            "tier": draft.tier,
            "tier_feature": draft.tier_feature,
            "environment": draft.env_info,
            "clinical_situation": draft.session_plan.get("clinical_situation"),
        },
        "earlier_turns": [
            {"turn": t.index, "request": t.request_explicit_en, "answer": t.answer_en}
            for t in draft.turns[: turn.index]
        ],
        "turn": {
            "index": turn.index,
            "task_type": TASK_TYPES[turn.task_type],
            "topic": turn.topic,
            "entity": turn.entity,
            "example_request": turn.request_explicit_en,
            "implicitness_rule": rule,
        },
        "tool_calls": prompt_calls(turn),
        "derivations": [d.__dict__ for d in turn.derivations],
        "rubric_items": items,
    }


def _writer_problems(
    *, data: dict[str, Any], turn: TurnDraft, pool: set[Decimal], items: list[dict[str, Any]]
) -> list[str]:
    problems: list[str] = []
    explicit, implicit, answer = data["request_explicit"], data.get("request_implicit") or "", data["answer"]
    if turn.index:
        problems += _form_problems_en(turn=turn, explicit=explicit, implicit=implicit)
    for where, text in [("request_explicit", explicit), ("request_implicit", implicit), ("answer", answer)] + [
        (f"rubric[{i}]", t) for i, t in enumerate(data["rubric"])
    ]:
        if invented := sorted(numbers(text) - pool):
            problems.append(f"{where} has numbers not in the observations: {', '.join(map(str, invented))}")
    said = numbers(answer)
    for i, item in enumerate(items):
        check = item["check"] or {}
        if check.get("kind") == "value_unit":
            value = as_decimal(check["value"])
            tolerance = Decimal(str(check.get("tolerance") or 0))
            if value is not None and not any(abs(n - value) <= tolerance for n in said):
                problems.append(f"answer must mention {item['must_mention'][0]} (rubric item {i})")
        elif (
            check.get("kind") == "term"
            and check.get("en")
            and not any(term.lower() in answer.lower() for term in check["en"])
        ):
            problems.append(f"answer must mention {check['en'][0]!r} (rubric item {i})")
    return problems


def _words(text: str) -> list[str]:
    return [w.strip("?.,!:;").lower() for w in text.split()]


def _form_problems_en(*, turn: TurnDraft, explicit: str, implicit: str) -> list[str]:
    """The implicitness gates, asked before the gates run so that a re-ask can fix them."""
    if not implicit.strip():
        return ["request_implicit is required for this turn"]
    if implicit.strip() == explicit.strip():
        return ["request_implicit must differ from request_explicit"]
    if turn.subtype == "NA" and not set(_words(implicit)) & set(NA_PRONOUNS_EN):
        return [f"request_implicit must use one of the pronouns {', '.join(NA_PRONOUNS_EN)}"]
    if turn.subtype == "PE" and len(_words(implicit)) > PE_MAX_WORDS:
        return [f"request_implicit must have at most {PE_MAX_WORDS} words"]
    if turn.subtype == "AE" and not implicit.startswith(AE_MARKERS_EN):
        return ["request_implicit must start with 'Given all that'"]
    return []


def _zh_terms(turn: TurnDraft) -> list[str]:
    """Chinese terms the answer must use: the glossary terms of the turn's term checks."""
    terms = []
    for item in turn.rubric:
        check = item.check or {}
        if check.get("kind") == "term" and check.get("zh"):
            terms.append(check["zh"][0])
    return sorted(set(terms))


def _translator_payload(*, turn: TurnDraft, texts_en: dict[str, Any], zh_terms: list[str]) -> dict[str, Any]:
    rule = SUBTYPE_RULES_ZH[turn.subtype] if turn.subtype else "与 request_explicit 相同（首轮为明确提问）"
    return {
        "english": texts_en,
        "implicitness_rule_zh": rule,
        "chinese_terms": zh_terms,
        "tool_names_keep_as_is": sorted(n for n in TOOL_NAMES if any(n in str(v) for v in texts_en.values())),
    }


def _translation_problems(
    *, data: dict[str, Any], texts_en: dict[str, Any], turn: TurnDraft, zh_terms: list[str]
) -> list[str]:
    problems: list[str] = []
    pairs = [(key, texts_en[key], data[key]) for key in ("request_explicit", "request_implicit", "answer")]
    pairs += [
        (f"rubric[{i}]", en, zh) for i, (en, zh) in enumerate(zip(texts_en["rubric"], data["rubric"], strict=True))
    ]
    for where, en, zh in pairs:
        if lost := sorted(numbers(en) - numbers(zh)):
            problems.append(f"{where} lost numbers {', '.join(map(str, lost))}")
        if lost_units := sorted(units(en) - units(zh)):
            problems.append(f"{where} lost units {', '.join(lost_units)}")
        if lost_tools := [n for n in TOOL_NAMES if n in en and n not in zh]:
            problems.append(f"{where} must keep the tool names {', '.join(lost_tools)}")
    implicit = data["request_implicit"]
    if turn.subtype == "NA" and not any(p in implicit for p in NA_PRONOUNS_ZH):
        problems.append("request_implicit must use 它, 它们 or 他们")
    if turn.subtype == "AE" and not implicit.startswith(AE_MARKERS_ZH):
        problems.append("request_implicit must start with 综合以上")
    if missing := [t for t in zh_terms if t not in data["answer"]]:
        problems.append(f"answer must use the Chinese terms {', '.join(missing)}")
    return problems
