"""A stored turn result with the columns every test needs filled, for tests that do not play a run."""

from typing import Any

from evaluation.models import EvalRun, TurnResult


def turn_result(*, run: EvalRun, session_id: str, **overrides: Any) -> TurnResult:
    fields = {
        "turn_index": 0,
        "language": "en",
        "variant": "implicit",
        "scenario": "med_safety",
        "tier": 1,
        "task_type": "IL",
        "tool_source": "ehr",
    }
    return TurnResult.objects.create(run=run, session_id=session_id, **{**fields, **overrides})
