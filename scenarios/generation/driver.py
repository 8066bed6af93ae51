"""Plan → build → gate, retried with a new attempt seed; a session that keeps failing is kept as
``rejected_by_gate`` with its reasons (never silently dropped)."""

from __future__ import annotations

import logging

from scenarios.generation.common import PatientAnswer
from scenarios.generation.gates import check_session
from scenarios.generation.planner import Candidate, plan_session
from scenarios.generation.session import build_session
from scenarios.generation.types import GateFailure, GenerationOutcome, SessionDraft

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
) -> GenerationOutcome:
    last: SessionDraft | None = None
    reasons: list[GateFailure] = []
    for attempt in range(max_attempts):
        plan = plan_session(
            scenario=scenario, tier=tier, seed=seed, index=index, candidates=candidates, attempt=attempt
        )
        if plan is None:
            return GenerationOutcome(
                "no_candidate", None, attempt, [GateFailure("plan", None, f"no admission fits {scenario} tier {tier}")]
            )
        try:
            draft = build_session(plan=plan, patient_answer=patient_answer)
        except Exception as exc:  # a builder bug must reject this attempt, not the whole run
            logger.exception("building %s failed", plan.session_id)
            reasons = [GateFailure("build", None, f"{type(exc).__name__}: {exc}")]
            continue
        draft.gate_failures = check_session(draft)
        last, reasons = draft, draft.gate_failures
        if not reasons:
            return GenerationOutcome("passed", draft, attempt + 1, [])
    return GenerationOutcome("rejected_by_gate", last, max_attempts, reasons)
