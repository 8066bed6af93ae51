"""The ``openai`` generation backend: grounded skeleton from the rules builders, texts from an LLM.

What must stay grounded stays deterministic: the planner, the gold tool calls executed at the session
cutoff and their observations, the derivations and the machine-checkable rubric checks all come from
the rules builders. The LLM (role ``generator``) writes the English requests, gold answer and rubric
wording from that skeleton; role ``translator`` writes the Chinese; then the same deterministic gates
run, and role ``judge`` audits each turn (temperature 0, versioned prompt). Bad model output is re-asked
a few times and then counted as a gate failure (``llm_output``); nothing is half-written.

This module runs one session through those steps and reports on it; the clients and their start-up
check are :mod:`scenarios.generation.llm_roles`, the writing :mod:`scenarios.generation.llm_writer`
and the audit :mod:`scenarios.generation.llm_audit`.
"""

from __future__ import annotations

import logging
from typing import Any

from core.llm import UsageAccumulator
from scenarios.generation.common import PatientAnswer
from scenarios.generation.gates import check_session
from scenarios.generation.llm_audit import audit_session
from scenarios.generation.llm_roles import LLMRoles
from scenarios.generation.llm_writer import write_texts
from scenarios.generation.planner import Candidate, plan_session
from scenarios.generation.prompts import manifest
from scenarios.generation.session import build_session
from scenarios.generation.types import GateFailure, GenerationOutcome, SessionDraft

logger = logging.getLogger(__name__)

MAX_REASKS = 2


def generate_session_llm(
    *,
    scenario: str,
    tier: int,
    seed: int,
    index: int,
    patient_answer: PatientAnswer,
    llm: LLMRoles,
    max_attempts: int = 3,
    candidates: list[Candidate] | None = None,
    max_reasks: int = MAX_REASKS,
) -> GenerationOutcome:
    """Plan → rules skeleton → LLM texts → gates → audit, retried like the rules driver.

    ``outcome.llm`` carries the usage totals, prompt versions/hashes, models and audit verdicts.
    ``LLMRequestError``/``LLMResponseError`` (endpoint trouble, not model output) propagate.
    """
    usage = UsageAccumulator()
    report: dict[str, Any] = {"backend": "openai", "prompts": manifest(), "models": llm.models()}
    last: SessionDraft | None = None
    reasons: list[GateFailure] = []
    # Every rejected attempt's failures, in order: the stored and printed reasons of the run.
    rejected: list[list[GateFailure]] = []
    for attempt in range(max_attempts):
        plan = plan_session(
            scenario=scenario, tier=tier, seed=seed, index=index, candidates=candidates, attempt=attempt
        )
        if plan is None:
            reasons = [GateFailure("plan", None, f"no admission fits {scenario} tier {tier}")]
            return _outcome("no_candidate", None, attempt, reasons, report=report, usage=usage, rejected=rejected)
        try:
            skeleton = build_session(plan=plan, patient_answer=patient_answer)
        except Exception as exc:  # a builder bug rejects this attempt, not the run (as in the rules driver)
            logger.exception("building %s failed", plan.session_id)
            reasons = [GateFailure("build", None, f"{type(exc).__name__}: {exc}")]
            rejected.append(reasons)
            continue
        if structural := check_session(skeleton):
            # The grounded skeleton itself fails (e.g. an empty gold result): no text can fix that, so no tokens.
            skeleton.gate_failures = structural
            last, reasons = skeleton, structural
            report["texts"], report["audit"] = "rules_fallback", []
            rejected.append(reasons)
            continue
        # A new attempt is a new sample, not a cache hit on the last one; a re-run hits the cache.
        salt = f"attempt-{attempt}"
        draft, reasons = write_texts(skeleton=skeleton, llm=llm, usage=usage, max_reasks=max_reasks, salt=salt)
        report["texts"] = "rules_fallback" if reasons else "llm"
        report["audit"] = []
        if not reasons:
            reasons = check_session(draft)
        if not reasons:
            # The audit costs tokens: only drafts that passed every deterministic gate get one.
            reasons, report["audit"] = audit_session(
                draft=draft, llm=llm, usage=usage, max_reasks=max_reasks, salt=salt
            )
        draft.gate_failures = reasons
        last = draft
        if not reasons:
            return _outcome("passed", draft, attempt + 1, [], report=report, usage=usage, rejected=rejected)
        rejected.append(reasons)
    return _outcome("rejected_by_gate", last, max_attempts, reasons, report=report, usage=usage, rejected=rejected)


def _outcome(
    status: str,
    draft: SessionDraft | None,
    attempts: int,
    reasons: list[GateFailure],
    *,
    report: dict[str, Any],
    usage: UsageAccumulator,
    rejected: list[list[GateFailure]],
) -> GenerationOutcome:
    llm = {**report, "usage": usage.totals().as_dict()}
    return GenerationOutcome(status, draft, attempts, reasons, llm=llm, rejected_attempts=rejected)
