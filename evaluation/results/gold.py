"""The gold turn a turn result was judged against, from the run's own dataset (snapshot or DB rows)."""

from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext as _

from evaluation.dataset import EvalTurn, session_from_model, session_from_record
from evaluation.models import EvalRun, TurnResult


def _from_snapshot(*, snapshot_id: int, record_id: str) -> Any:
    from annotations.models import SnapshotItem

    item = SnapshotItem.objects.filter(snapshot_id=snapshot_id, record_id=record_id).only("record_json").first()
    return session_from_record(json.loads(item.record_json)) if item else None


def gold_turn(*, run: EvalRun, result: TurnResult) -> tuple[EvalTurn | None, str]:
    """(gold turn, where it came from); ``(None, reason)`` when the dataset no longer has it.

    A snapshot is frozen, so it is preferred; DB rows may have been edited since the run (the page says so).
    """
    from scenarios.models import Session

    dataset = (run.manifest or {}).get("dataset") or {}
    session = (
        Session.objects.filter(session_id=result.session_id)
        .prefetch_related("turns__steps", "turns__rubric_items")
        .first()
    )
    if dataset.get("source") == "snapshot" and dataset.get("snapshot_id") and session is not None:
        frozen = _from_snapshot(snapshot_id=dataset["snapshot_id"], record_id=session.record_id)
        if frozen is not None:
            turn = next((t for t in frozen.turns if t.index == result.turn_index), None)
            return turn, _("snapshot %(label)s") % {"label": dataset.get("label", "")}
    if session is None:
        return None, _("the session is no longer in the database")
    eval_session = session_from_model(session)
    turn = next((t for t in eval_session.turns if t.index == result.turn_index), None)
    return turn, _("the database as it is now (it may have changed since the run)")
