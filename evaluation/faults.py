"""Physicians attribute a turn's outcome: the model's fault, the patient simulator's, or the task's.

tau2-bench's reviews found user-simulator errors behind up to 30% of failed trajectories and tasks nobody could
pass; only an LLM reviewed them there. Here a physician marks a turn result on its drill-down (blind: each sees
only their own mark). A task fault (request, gold answer, gold call or rubric item wrong or ambiguous) sends the
curated turn back to review, so the next snapshot carries the corrected version; a run's metrics are shown with
and without the turns attributed to a task fault, and its simulator-fault rate beside them.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from annotations.services.reopen import reopen_for_review
from evaluation import metrics
from evaluation.models import EvalRun, FaultAttribution, FaultKind, TaskPart, TurnResult
from scenarios.models import Turn

PASS_TAU = 0.75
METRIC_FIELDS = ("session_id", "turn_index", "language", "variant", "trial", "tier", "score", "infra_error")


class FaultError(ValueError):
    """The attribution cannot be saved; the message says why, in the UI language."""


def own_attribution(*, result: TurnResult, physician: Any) -> FaultAttribution | None:
    """The physician's own attribution of ``result`` (blind: nobody sees another's)."""
    return FaultAttribution.objects.filter(turn_result=result, physician_id=physician.pk).first()


def attribute_fault(
    *, result: TurnResult, physician: Any, kind: str, task_part: str = "", note: str = ""
) -> FaultAttribution:
    """Save (or change) the physician's attribution; a task fault reopens the curated turn for review."""
    if kind not in FaultKind.values:
        raise FaultError(_("Choose whose fault it is: the model, the patient simulator or the task."))
    note = note.strip()
    if kind == FaultKind.TASK:
        if task_part not in TaskPart.values:
            raise FaultError(
                _("Say what is wrong with the task: the request, the gold answer, a gold call or a rubric item.")
            )
        if not note:
            raise FaultError(_("A task fault needs a note: the reviewers who look at the turn again read it."))
    else:
        task_part = ""
    with transaction.atomic():
        attribution, _created = FaultAttribution.objects.update_or_create(
            turn_result=result,
            physician=physician,
            defaults={"kind": kind, "task_part": task_part, "note": note},
        )
        if kind == FaultKind.TASK and not attribution.reopened:
            turn = _curated_turn(result)
            if turn is not None:
                label = TaskPart(task_part).label
                reason = f"Task fault on run {result.run_id}, turn result {result.pk} ({label}): {note}"
                reopen_for_review(turn=turn, author=physician, reason=reason)
                attribution.reopened = True
                attribution.save(update_fields=["reopened"])
    return attribution


def _curated_turn(result: TurnResult) -> Turn | None:
    return Turn.objects.filter(session__session_id=result.session_id, index=result.turn_index).first()


def _view(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scored = metrics.scored_rows(rows)
    return {
        "turns": len(scored),
        "mrs": metrics.mrs_value(rows),
        "pass_at_turn": metrics.pass_at_turn(rows, PASS_TAU),
        "pass_at_session": metrics.pass_at_session(rows, PASS_TAU),
    }


def fault_summary(*, run: EvalRun) -> dict[str, Any]:
    """The run's metrics on every scored turn and without the turns any physician attributed to a task fault
    (a task fault concerns the task, so every language, variant and trial of that turn is left out), and the
    share of attributed turn results each kind accounts for (the simulator-fault rate is the judge-independent
    share of attributed results whose patient simulator was at fault)."""
    attributions = list(FaultAttribution.objects.filter(turn_result__run=run).select_related("turn_result"))
    task_turns = {
        (a.turn_result.session_id, a.turn_result.turn_index) for a in attributions if a.kind == FaultKind.TASK
    }
    # Only what the metrics read (not the traces): the run page computes this on every load.
    rows = list(run.turn_results.values(*METRIC_FIELDS).iterator(chunk_size=2000)) if attributions else []
    kept = [r for r in rows if (r["session_id"], r["turn_index"]) not in task_turns]
    attributed = {a.turn_result_id for a in attributions}
    by_kind = {kind: {a.turn_result_id for a in attributions if a.kind == kind} for kind in FaultKind.values}
    share = {kind: (len(ids) / len(attributed) if attributed else None) for kind, ids in by_kind.items()}
    if not attributions:  # nothing attributed: both views are the run's summary (not read again here)
        return {"attributed_results": 0, "judge": run.judge, "tau": PASS_TAU}
    return {
        "all": _view(rows),
        "without_task_faults": _view(kept),
        "task_faulted_turns": len(task_turns),
        "attributed_results": len(attributed),
        "counts": {kind: len(ids) for kind, ids in by_kind.items()},
        "shares": share,
        "simulator_fault_rate": share[FaultKind.SIMULATOR],
        "judge": run.judge,
        "tau": PASS_TAU,
    }
