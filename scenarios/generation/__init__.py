"""Session generation for the deterministic ``rules`` backend: planner, turn builders, quality gates.

Pure functions over the EHR tools, producing plain dataclasses (persistence lives elsewhere)::

    from scenarios.generation import generate_session
    outcome = generate_session(scenario="med_safety", tier=2, seed=1, index=0, patient_answer=answer)

The ``openai`` backend (:mod:`scenarios.generation.llm_backend`) keeps this grounded skeleton and has
an LLM write the texts, then runs the same gates plus an LLM audit::

    outcome = generate_session(..., backend="openai", llm=LLMRoles.from_env())
"""

from scenarios.generation.driver import generate_session
from scenarios.generation.gates import check_session
from scenarios.generation.planner import Candidate, enumerate_candidates, plan_session
from scenarios.generation.session import build_session
from scenarios.generation.types import GateFailure, GenerationOutcome, SessionDraft, SessionPlan

__all__ = [
    "Candidate",
    "GateFailure",
    "GenerationOutcome",
    "SessionDraft",
    "SessionPlan",
    "build_session",
    "check_session",
    "enumerate_candidates",
    "generate_session",
    "plan_session",
]
