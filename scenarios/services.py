"""Writes of the generation pipeline: runs, and one generated session per (run, index) slot.

Idempotency: a slot's session is keyed by ``(run, run_index)`` (unique constraint). Generating a
slot first looks for its row, and a concurrent duplicate (a redelivered Celery task racing the
first delivery) loses on the constraint and returns the winner's row, so a slot never yields two
sessions and re-running a slot costs one SELECT. Counts on the run are recomputed from the rows
(:func:`refresh_run_counts`), never incremented, so redeliveries cannot skew them.
"""

import functools
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.llm import LLMError
from scenarios.generation import Candidate, enumerate_candidates, generate_session
from scenarios.generation.llm_roles import LLMRoles
from scenarios.generation.prompts import manifest as prompt_manifest
from scenarios.generation.reasons import attempt_records
from scenarios.generation.types import GenerationOutcome, session_id_for
from scenarios.models import (
    GenerationRun,
    RunStatus,
    Scenario,
    Session,
    SessionStatus,
)
from scenarios.patient import make_patient_responder
from scenarios.persist_draft import persist_draft

logger = logging.getLogger(__name__)

ALL_TIERS = (1, 2, 3)
# A slot whose LLM calls failed (endpoint down, retries exhausted): retried by a resume, unlike a
# slot without a fitting admission.
LLM_ERROR = "llm_error"
_COST_STEP = Decimal("0.000001")
ALL_SCENARIOS = tuple(Scenario.values)


@dataclass(frozen=True)
class Slot:
    index: int
    scenario: str
    tier: int


def _grid(scenarios: list[str], tiers: list[int]) -> list[tuple[str, int]]:
    return [(scenario, tier) for tier in tiers for scenario in scenarios]


def spread_slots(*, scenarios: list[str], tiers: list[int], n: int) -> list[Slot]:
    """N slots spread evenly: the scenario × tier grid is walked round-robin, so any 12 cover 4 × 3."""
    grid = _grid(scenarios, tiers)
    return [Slot(index=i, scenario=grid[i % len(grid)][0], tier=grid[i % len(grid)][1]) for i in range(n)]


def run_slots(*, run: GenerationRun) -> list[Slot]:
    p = run.parameters
    return spread_slots(scenarios=p["scenarios"], tiers=p["tiers"], n=run.requested)


def run_slot(*, run: GenerationRun, index: int) -> Slot:
    """Slot ``index`` of the run, as :func:`run_slots` lists it, without building the whole plan (generating a
    slot did that before: 20 ms per slot at 5,000 sessions, quadratic over a run; bench/scale.py)."""
    if not 0 <= index < run.requested:
        raise ValueError(f"run {run.pk} has slots 0..{run.requested - 1}, not {index}")
    grid = _grid(run.parameters["scenarios"], run.parameters["tiers"])
    scenario, tier = grid[index % len(grid)]
    return Slot(index=index, scenario=scenario, tier=tier)


MAX_RUN_SESSIONS = 10_000  # far above any release; a run's plan is held in memory (--n 1e8: 1.3 GB, issue 36)


def create_run(*, backend: str, seed: int, scenarios: list[str], tiers: list[int], n: int) -> GenerationRun:
    unknown = sorted(set(scenarios) - set(ALL_SCENARIOS))
    if unknown:
        raise ValueError(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(ALL_SCENARIOS)}")
    if not set(tiers) <= set(ALL_TIERS) or not tiers:
        raise ValueError(f"tiers must be among 1, 2, 3 (got {tiers})")
    if n < 1:
        raise ValueError("--n must be at least 1")
    if n > MAX_RUN_SESSIONS:
        raise ValueError(f"--n {n}: at most {MAX_RUN_SESSIONS:,} sessions per run; make several runs (other --seed)")
    planned = [
        session_id_for(scenario=s.scenario, seed=seed, tier=s.tier, index=s.index)
        for s in spread_slots(scenarios=scenarios, tiers=tiers, n=n)
    ]
    clash = Session.objects.filter(session_id__in=planned).order_by("run_id").first()
    if clash is not None:
        # Same seed, same slots: the sessions exist already; regenerating would only duplicate them.
        raise ValueError(
            f"session {clash.session_id} already exists (run {clash.run_id}); "
            f"use --resume {clash.run_id} to finish that run, or another --seed"
        )
    parameters: dict[str, Any] = {"scenarios": list(scenarios), "tiers": list(tiers), "n": n}
    extra: dict[str, Any] = {}
    if backend == "openai":
        # Which prompt wording the run used; its cost starts at a known 0 and becomes NULL (unknown)
        # as soon as one session has an unpriced call.
        parameters["prompts"] = prompt_manifest()
        extra["cost_usd"] = Decimal(0)
    return GenerationRun.objects.create(
        backend=backend,
        seed=seed,
        parameters=parameters,
        requested=n,
        status=RunStatus.RUNNING,
        **extra,
    )


def missing_slots(*, run: GenerationRun) -> list[Slot]:
    """Slots without a session and without a recorded failure: what a resume still has to do."""
    done = set(Session.objects.filter(run=run).values_list("run_index", flat=True))
    failed = {e["index"] for e in run.errors if "index" in e and e.get("reason") != LLM_ERROR}
    return [s for s in run_slots(run=run) if s.index not in done and s.index not in failed]


def _patient_answer() -> Callable[..., dict[str, Any]]:
    """Gold patient answers come from the agentic patient built from the record (memory + persona)."""
    return make_patient_responder()


@functools.lru_cache(maxsize=24)
def _run_candidates(run_id: int, run_created: str, scenario: str, tier: int) -> tuple[Candidate, ...]:
    """A run's planner candidates per scenario × tier, enumerated once per process instead of per slot.

    The record does not change during a run (an import replaces tables; do not import while generating).
    ``run_created`` is in the key so a reused primary key (SQLite after a rollback) never hits a stale entry.
    """
    return tuple(enumerate_candidates(scenario=scenario, tier=tier))


def generate_slot(*, run_id: int, index: int, llm: LLMRoles | None = None) -> Session | None:
    """Generate and store the session of one slot (idempotent; see module docstring).

    Returns the stored session (also when it is ``rejected_by_gate``), or ``None`` when no admission
    of the record fits the slot, or when the LLM endpoint failed (both recorded on the run's errors;
    the latter is retried by a resume). The backend is the run's; for ``openai`` the role clients come
    from the environment unless ``llm`` is given. The session's tokens and cost are added to the run
    (row lock) in the transaction that stores it, so only a newly stored session counts.
    """
    run = GenerationRun.objects.get(pk=run_id)
    existing = Session.objects.filter(run=run, run_index=index).first()
    if existing is not None:
        return existing
    slot = run_slot(run=run, index=index)
    if run.backend == "openai":
        try:
            outcome = _generate_openai(run=run, slot=slot, llm=llm)
        except LLMError as exc:
            # Endpoint trouble is not a property of the session: store nothing, let a resume retry it.
            logger.warning("run %s slot %s: %s", run_id, index, exc)
            _record_error(run_id=run_id, error={"index": index, "reason": LLM_ERROR, "detail": str(exc)})
            return None
    else:
        outcome = generate_session(
            scenario=slot.scenario,
            tier=slot.tier,
            seed=run.seed,
            index=index,
            patient_answer=_patient_answer(),
            candidates=list(_run_candidates(run.pk, run.created_at.isoformat(), slot.scenario, slot.tier)),
        )
    if outcome.draft is None:
        _record_error(run_id=run_id, error={"index": index, "reason": outcome.status, "slot": slot.__dict__})
        return None
    try:
        with transaction.atomic():
            session = persist_draft(run=run, index=index, outcome=outcome)
            if outcome.llm is not None:
                _add_usage(run_id=run_id, usage=outcome.llm["usage"])
            _add_rejections(run_id=run_id, index=index, outcome=outcome)
            return session
    except IntegrityError:
        # Another delivery of the same slot won, or the session id exists from an earlier run.
        winner = Session.objects.filter(run=run, run_index=index).first()
        if winner is not None:
            return winner
        clash = Session.objects.filter(session_id=outcome.draft.session_id).select_related("run").first()
        _record_error(
            run_id=run_id,
            error={
                "index": index,
                "reason": "duplicate_session_id",
                "detail": f"session {outcome.draft.session_id} already exists"
                + (f" (run {clash.run_id})" if clash else ""),
            },
        )
        return None


def _generate_openai(*, run: GenerationRun, slot: Slot, llm: LLMRoles | None) -> GenerationOutcome:
    roles = llm if llm is not None else LLMRoles.from_env()
    try:
        return generate_session(
            scenario=slot.scenario,
            tier=slot.tier,
            seed=run.seed,
            index=slot.index,
            patient_answer=_patient_answer(),
            backend="openai",
            llm=roles,
        )
    finally:
        if llm is None:
            roles.close()


def _add_usage(*, run_id: int, usage: dict[str, Any]) -> None:
    """Add one session's tokens and cost to its run. Row lock: workers finish sessions concurrently."""
    run = GenerationRun.objects.select_for_update().get(pk=run_id)
    run.prompt_tokens += usage["prompt_tokens"]
    run.completion_tokens += usage["completion_tokens"]
    cost = usage["cost_usd"]
    # Unknown stays unknown: a run with one unpriced call has no honest total.
    if cost is None or run.cost_usd is None:
        run.cost_usd = None
    else:
        run.cost_usd = (run.cost_usd + Decimal(str(cost))).quantize(_COST_STEP)
    run.save(update_fields=["prompt_tokens", "completion_tokens", "cost_usd"])


def _add_rejections(*, run_id: int, index: int, outcome: GenerationOutcome) -> None:
    """Store why the slot's attempts were rejected (row lock, as for usage; a slot's records are replaced)."""
    records = attempt_records(outcome=outcome, index=index)
    if not records:
        return
    run = GenerationRun.objects.select_for_update().get(pk=run_id)
    run.rejections = [r for r in run.rejections if r.get("index") != index] + records
    run.save(update_fields=["rejections"])


def reopen_llm_errors(*, run_id: int) -> int:
    """Forget the slots that failed on the LLM endpoint so a resume retries them; returns how many."""
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run_id)
        kept = [e for e in run.errors if e.get("reason") != LLM_ERROR]
        dropped = len(run.errors) - len(kept)
        if dropped:
            run.errors = kept
            run.save(update_fields=["errors"])
    return dropped


def _record_error(*, run_id: int, error: dict[str, Any]) -> None:
    """Append an error once per slot; takes a row lock on the run (workers write concurrently)."""
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run_id)
        if not any(e.get("index") == error.get("index") for e in run.errors):
            run.errors = [*run.errors, error]
            run.save(update_fields=["errors"])


def refresh_run_counts(*, run_id: int, finished: bool) -> GenerationRun:
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run_id)
        statuses = Counter(Session.objects.filter(run=run).values_list("status", flat=True))
        run.made = statuses[SessionStatus.DRAFT]
        run.rejected_by_gate = statuses[SessionStatus.REJECTED_BY_GATE]
        if finished:
            run.status = RunStatus.FINISHED
            run.finished_at = timezone.now()
        run.save()
    return run


def mark_run(*, run_id: int, status: str) -> None:
    GenerationRun.objects.filter(pk=run_id).update(status=status)


def gate_reasons(*, run: GenerationRun) -> Counter:
    reasons: Counter = Counter()
    for report in Session.objects.filter(run=run, status=SessionStatus.REJECTED_BY_GATE).values_list(
        "gate_report", flat=True
    ):
        reasons.update(f["gate"] for f in report.get("failures", []))
    return reasons
