"""Plan → build → gate, retried with a new attempt seed; a session that keeps failing is kept as
``rejected_by_gate`` with its reasons (never silently dropped)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scenarios.generation.common import PatientAnswer
from scenarios.generation.gates import check_session
from scenarios.generation.planner import Candidate, plan_session
from scenarios.generation.session import build_session
from scenarios.generation.types import GateFailure, GenerationOutcome, SessionDraft

if TYPE_CHECKING:
    from scenarios.generation.llm_roles import LLMRoles

logger = logging.getLogger(__name__)


def generate_session(
    *,
    scenario: str,
    tier: int,
    seed: int,
    index: int,
    patient_answer: PatientAnswer,
    max_attempts: int = 3,
    candidates: list[Candidate] | None = None,
    backend: str = "rules",
    llm: LLMRoles | None = None,
) -> GenerationOutcome:
    if backend == "openai":
        # Imported here: the rules path must not need the LLM layer.
        from scenarios.generation.llm_backend import generate_session_llm

        if llm is None:
            raise ValueError("the openai backend needs llm= (LLMRoles.from_env())")
        return generate_session_llm(
            scenario=scenario,
            tier=tier,
            seed=seed,
            index=index,
            patient_answer=patient_answer,
            llm=llm,
            max_attempts=max_attempts,
            candidates=candidates,
        )
    if backend != "rules":
        raise ValueError(f"unknown generation backend {backend!r} (expected rules or openai)")
    last: SessionDraft | None = None
    reasons: list[GateFailure] = []
    rejected: list[list[GateFailure]] = []
    for attempt in range(max_attempts):
        plan = plan_session(
            scenario=scenario, tier=tier, seed=seed, index=index, candidates=candidates, attempt=attempt
        )
        if plan is None:
            failure = GateFailure("plan", None, f"no admission fits {scenario} tier {tier}")
            return GenerationOutcome("no_candidate", None, attempt, [failure], rejected_attempts=rejected)
        try:
            draft = build_session(plan=plan, patient_answer=patient_answer)
        except Exception as exc:  # a builder bug must reject this attempt, not the whole run
            logger.exception("building %s failed", plan.session_id)
            reasons = [GateFailure("build", None, f"{type(exc).__name__}: {exc}")]
            rejected.append(reasons)
            continue
        draft.gate_failures = check_session(draft)
        last, reasons = draft, draft.gate_failures
        if not reasons:
            return GenerationOutcome("passed", draft, attempt + 1, [], rejected_attempts=rejected)
        rejected.append(reasons)
    return GenerationOutcome("rejected_by_gate", last, max_attempts, reasons, rejected_attempts=rejected)
