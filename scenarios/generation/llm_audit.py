"""The ``openai`` backend's audit: role ``judge`` checks each written turn on the audit criteria.

Only drafts that passed every deterministic gate are audited (the audit costs tokens). The judge
runs at temperature 0 with a versioned prompt; a failed criterion becomes a gate failure carrying
the auditor's reason, and an answer that stays unusable after the re-asks an ``llm_output`` failure.
"""

from __future__ import annotations

from typing import Any

from core.llm import UsageAccumulator
from scenarios.generation.llm_json import ask_json, unusable
from scenarios.generation.llm_roles import LLMRoles
from scenarios.generation.llm_writer import prompt_calls
from scenarios.generation.prompts import AUDIT_CRITERIA, AUDITOR
from scenarios.generation.types import TASK_TYPES, GateFailure, SessionDraft, TurnDraft

_VERDICT = {"pass": "bool", "reason": "str?"}


def audit_session(
    *, draft: SessionDraft, llm: LLMRoles, usage: UsageAccumulator, max_reasks: int, salt: str = ""
) -> tuple[list[GateFailure], list[dict[str, Any]]]:
    """Judge each turn on the four criteria; a failed criterion is a gate failure with the auditor's reason."""
    failures: list[GateFailure] = []
    verdicts: list[dict[str, Any]] = []
    for turn in draft.turns:
        answer = ask_json(
            client=llm.judge,
            prompt=AUDITOR,
            payload=_audit_payload(turn=turn),
            schema={criterion: _VERDICT for criterion in AUDIT_CRITERIA},
            validate=_audit_problems,
            usage=usage,
            max_reasks=max_reasks,
            temperature=0.0,
            cache_salt=salt,
        )
        if answer.data is None:
            problem = unusable(role="judge", answer=answer)
            failures.append(GateFailure("llm_output", turn.index, problem))
            verdicts.append({"turn": turn.index, "error": problem})
            continue
        verdicts.append({"turn": turn.index, **answer.data})
        for criterion in AUDIT_CRITERIA:
            verdict = answer.data[criterion]
            if not verdict["pass"]:
                failures.append(GateFailure("audit", turn.index, f"{criterion}: {verdict['reason'].strip()}"))
    return failures, verdicts


def _audit_problems(data: dict[str, Any]) -> list[str]:
    return [
        f"{criterion}.reason is required when pass is false"
        for criterion in AUDIT_CRITERIA
        if not data[criterion]["pass"] and not (data[criterion].get("reason") or "").strip()
    ]


def _audit_payload(*, turn: TurnDraft) -> dict[str, Any]:
    return {
        "turn": turn.index,
        "task_type": TASK_TYPES[turn.task_type],
        "request_explicit_en": turn.request_explicit_en,
        "request_implicit_en": turn.request_implicit_en,
        "request_explicit_zh": turn.request_explicit_zh,
        "request_implicit_zh": turn.request_implicit_zh,
        "tool_calls": prompt_calls(turn),
        "derivations": [d.__dict__ for d in turn.derivations],
        "answer_en": turn.answer_en,
        "answer_zh": turn.answer_zh,
        "rubric": [{"en": r.text_en, "zh": r.text_zh, "is_safety": r.is_safety} for r in turn.rubric],
    }
