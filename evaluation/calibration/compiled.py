"""The ``rules`` judge on compiled rubric items, recomputed on stored answers for calibration.

Physicians grade answers of any run (usually one judged by an LLM). The rules judge is deterministic
and needs only the answer, its write calls and the item's check, so its verdict on a compiled item
(a suggestion, or one a reviewer accepted or edited) is computed here for every graded answer; that
makes its agreement with physicians and with the LLM judge of the same answers visible.

For graded answers, an item that carries the generator's check (and so never got a stored suggestion) is
compiled from its wording here as well: that is the judge an official record, which has no generator checks,
is scored by, so a physician-graded generated set can certify it too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import Q

from evaluation.dataset import EvalRubric
from evaluation.judges.rules import judge_item
from evaluation.models import EvalRun, TurnResult
from scenarios.models import RubricItem

COMPILED_JUDGE = "rules (compiled)"
COMPILED_STATES = ("suggested", "accepted", "edited")


def _rubric(row: RubricItem) -> EvalRubric:
    # The compiled check is measured on its own: where the generator also stored a check, the rules judge would
    # score that one instead, and the compiled judge's agreement with physicians would be the generator's.
    return EvalRubric(
        idx=row.idx,
        text_en=row.text_en,
        text_zh=row.text_zh,
        is_safety=row.is_safety,
        machine_check=None,
        compiled_check=row.compiled_check,
        compiled_rule=row.compiled_rule,
        compiled_state=row.compiled_state,
    )


def _compiled_now(row: RubricItem) -> EvalRubric | None:
    # Imported here: runeval imports this module (certification at run creation) and never compiles (~50 ms).
    from scenarios.rubric_compiler.services import outcome_of

    compiled = outcome_of(row).compiled
    if compiled is None:
        return None
    rubric = _rubric(row)
    return replace(rubric, compiled_check=compiled.check, compiled_rule=compiled.rule, compiled_state="suggested")


def compiled_items(
    keys: Iterable[tuple[str, int]], *, compile_checked: bool = False
) -> dict[tuple[str, int, int], EvalRubric]:
    """``{(session_id, turn index, item idx): rubric}`` of the compiled items of those turns; with
    ``compile_checked``, items with the generator's check (and no reviewer decision) compiled from their wording."""
    wanted = set(keys)
    if not wanted:
        return {}
    which = Q(compiled_state__in=COMPILED_STATES)
    if compile_checked:
        which |= Q(machine_check__isnull=False, compiled_state="")
    rows = (
        RubricItem.objects.filter(which, turn__session__session_id__in={s for s, _i in wanted})
        .select_related("turn__session")
        .prefetch_related("turn__steps")
    )
    out = {}
    for row in rows:
        key = (row.turn.session.session_id, row.turn.index)
        if key not in wanted:
            continue
        rubric = _rubric(row) if row.compiled_state in COMPILED_STATES else _compiled_now(row)
        if rubric is not None:
            out[(*key, row.idx)] = rubric
    return out


def has_compiled_items() -> bool:
    """Whether the compiled judge can have verdicts: stored suggestions, or generator-checked items to compile."""
    return RubricItem.objects.filter(
        Q(compiled_state__in=COMPILED_STATES) | Q(machine_check__isnull=False, compiled_state="")
    ).exists()


def verdict(*, rubric: EvalRubric, trace: dict[str, Any]) -> dict[str, Any]:
    v = judge_item(item=rubric, answer=trace.get("answer") or "", writes=trace.get("writes") or [])
    return v.as_dict()


def verdicts_for(
    results: Iterable[TurnResult], *, compile_checked: bool = False
) -> dict[tuple[int, int], dict[str, Any]]:
    """``{(turn result pk, item idx): rules verdict}`` on the compiled items of those answers (``compile_checked``:
    as :func:`compiled_items`; for graded answers only, as compiling costs milliseconds per item)."""
    results = list(results)
    items = compiled_items(((r.session_id, r.turn_index) for r in results), compile_checked=compile_checked)
    out = {}
    for r in results:
        for (sid, index, idx), rubric in items.items():
            if sid == r.session_id and index == r.turn_index:
                out[(r.pk, idx)] = verdict(rubric=rubric, trace=r.trace or {})
    return out


@dataclass(frozen=True)
class JudgePair:
    """The rules judge on compiled items against another judge's verdicts on the same answers and items."""

    judge: str
    rules: list[bool]
    other: list[bool]


def judge_pairs(*, run_id: int | None = None) -> list[JudgePair]:
    """One pair per judge of the stored runs (the rules judge's own runs left out), over every answer."""
    runs = EvalRun.objects.exclude(judge="rules")
    if run_id is not None:
        runs = runs.filter(pk=run_id)
    judges = dict(runs.values_list("pk", "judge"))
    if not judges or not has_compiled_items():
        return []
    results = list(
        TurnResult.objects.filter(run_id__in=judges, infra_error="").only(
            "pk", "run_id", "session_id", "turn_index", "trace", "verdicts"
        )
    )
    ours = verdicts_for(results)
    pairs: dict[str, JudgePair] = {}
    for r in results:
        for v in r.verdicts or []:
            mine = ours.get((r.pk, int(v["idx"])))
            if mine is None or not mine["scored"] or not v.get("scored") or v.get("passed") is None:
                continue
            pair = pairs.setdefault(judges[r.run_id], JudgePair(judges[r.run_id], [], []))
            pair.rules.append(bool(mine["passed"]))
            pair.other.append(bool(v["passed"]))
    return [pairs[name] for name in sorted(pairs)]
