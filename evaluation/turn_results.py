"""One finished turn: judged, scored and stored.

Both a played run and a rejudged one end each turn here: :func:`judge_trace` turns the judge's
verdicts into the counts a ``TurnResult`` keeps (a judge that fails leaves the turn unscored rather
than stopping the run), and :func:`save_turn` stores it in its own transaction, which is what
``--resume`` relies on and what catches a run played twice.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from django.db import IntegrityError, transaction

from core.llm import track_calls
from evaluation.dataset import EvalSession
from evaluation.models import EvalRun, TurnResult
from evaluation.playing import RunConflictError

log = logging.getLogger(__name__)


def score_of(verdicts: list[dict[str, Any]]) -> tuple[int, int, int, float | None]:
    scored = [v for v in verdicts if v["scored"]]
    passed = sum(bool(v["passed"]) for v in scored)
    return passed, len(scored), len(verdicts) - len(scored), (passed / len(scored) if scored else None)


def judge_trace(*, judge: Any, session: EvalSession, turn: Any, language: str, trace: dict[str, Any]) -> dict:
    """Verdicts as dicts plus counts; a judge failure leaves the turn unscored with the error recorded.
    ``usage``: the judge's model calls for this turn (tokens, cost), ``None`` for a judge without any."""
    with track_calls() as calls:
        try:
            verdicts = [v.as_dict() for v in judge.judge(session=session, turn=turn, language=language, trace=trace)]
            error = ""
        except Exception as exc:  # an LLM judge that keeps failing must not stop the run
            log.warning("judge failed on %s/%s: %s", session.session_id, turn.index, exc)
            verdicts, error = [], f"{type(exc).__name__}: {exc}"
    passed, scored, unscored, score = score_of(verdicts)
    if error:
        unscored = len(turn.rubric)
    return {
        "verdicts": verdicts,
        "passed": passed,
        "scored": scored,
        "unscored": unscored,
        "score": score,
        "judge_error": error,
        "usage": calls.as_dict() if calls.results or calls.failures else None,
    }


def unjudged() -> dict[str, Any]:
    """What :func:`judge_trace` returns for a turn that was not judged (it ended on an infrastructure error)."""
    return {"verdicts": [], "passed": 0, "scored": 0, "unscored": 0, "score": None, "judge_error": ""}


def save_turn(
    *,
    run: EvalRun,
    session: EvalSession,
    turn: Any,
    key: dict[str, Any],
    trace: dict,
    judged: dict,
    replace: bool = True,
) -> None:
    """Store one finished turn in its own transaction (what --resume relies on): a single INSERT,
    or the DELETE of an earlier try and the INSERT together. A turn another process stored meanwhile
    raises :class:`~evaluation.playing.RunConflictError` (the run is being played twice)."""
    trace = {**trace, "judge_error": judged["judge_error"]} if judged["judge_error"] else trace
    trace = {k: v for k, v in trace.items() if k != "judge_usage"}
    if judged.get("usage"):
        trace["judge_usage"] = judged["usage"]
    try:
        _insert_turn(run=run, session=session, turn=turn, key=key, trace=trace, judged=judged, replace=replace)
    except IntegrityError:
        raise RunConflictError(
            f"session {session.session_id} turn {turn.index} ({key['language']}, {key['variant']}, trial "
            f"{key['trial']}) of run {run.pk} was stored by another process meanwhile: is the run played twice?"
        ) from None


def _insert_turn(
    *, run: EvalRun, session: EvalSession, turn: Any, key: dict[str, Any], trace: dict, judged: dict, replace: bool
) -> None:
    with transaction.atomic() if replace else contextlib.nullcontext():
        if replace:
            TurnResult.objects.filter(run=run, session_id=session.session_id, turn_index=turn.index, **key).delete()
        TurnResult.objects.create(
            run=run,
            session_id=session.session_id,
            turn_index=turn.index,
            scenario=session.scenario,
            tier=session.tier,
            task_type=turn.task_type,
            subtype=turn.subtype,
            tool_source=turn.tool_source,
            passed=judged["passed"],
            scored=judged["scored"],
            unscored=judged["unscored"],
            score=judged["score"],
            infra_error=trace.get("infra_error", ""),
            trace=trace,
            verdicts=judged["verdicts"],
            **key,
        )
