"""Judge calibration: drawing the sample physicians grade, and saving their grades.

A sample unit is one rubric item of one stored answer. Items are stratified by task type, language
and the judge's verdict (pass / fail / unscored) so that rare strata (failed safety items in Chinese,
say) are graded too; within a stratum the draw is seeded, so the same parameters give the same items.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from evaluation.calibration.selectors import answer_key, run_roots
from evaluation.models import CalibrationItem, CalibrationSample, EvalRun, GradeLabel, PhysicianGrade, TurnResult

MAX_PER_STRATUM = 1000


class CalibrationError(ValueError):
    """Bad input for a calibration action; the message names the problem and is shown to the user."""


def verdict_label(verdict: dict[str, Any]) -> str:
    if not verdict.get("scored") or verdict.get("passed") is None:
        return "unscored"
    return "pass" if verdict["passed"] else "fail"


def _candidates(run_ids: list[int]) -> dict[str, list[tuple[Any, ...]]]:
    """``{stratum: [(answer key, item, turn result pk), ...]}``, one entry per answer and item.

    An answer stored in several of the runs (a run and its rejudge) counts once, from its lowest run."""
    roots = run_roots()
    seen: set[tuple[Any, ...]] = set()
    strata: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    rows = (
        TurnResult.objects.filter(run_id__in=run_ids, infra_error="")
        .only("pk", "run_id", "session_id", "turn_index", "language", "variant", "trial", "task_type", "verdicts")
        .order_by("run_id", "pk")
    )
    for result in rows:
        key = answer_key(result, roots)
        for verdict in result.verdicts or []:
            unit = (key, int(verdict["idx"]))
            if unit in seen:
                continue
            seen.add(unit)
            stratum = f"{result.task_type}/{result.language}/{verdict_label(verdict)}"
            strata[stratum].append((key, int(verdict["idx"]), result.pk))
    return strata


def draw_sample(
    *, name: str, run_ids: Sequence[int], per_stratum: int, seed: int = 0, by: Any = None
) -> CalibrationSample:
    """Up to ``per_stratum`` items from every stratum of the given runs' judged answers.

    Idempotent: the same name with the same parameters returns the existing sample; the same name with
    other parameters is refused (a sample never changes under the graders)."""
    name = (name or "").strip()
    if not name:
        raise CalibrationError(_("the sample needs a name"))
    if not 1 <= per_stratum <= MAX_PER_STRATUM:
        raise CalibrationError(
            _("items per stratum must be between 1 and %(max)d, not %(n)d") % {"max": MAX_PER_STRATUM, "n": per_stratum}
        )
    ids = sorted({int(pk) for pk in run_ids})
    if not ids:
        raise CalibrationError(_("choose at least one evaluation run"))
    missing = sorted(set(ids) - set(EvalRun.objects.filter(pk__in=ids).values_list("pk", flat=True)))
    if missing:
        raise CalibrationError(_("no evaluation run with id %(ids)s") % {"ids": ", ".join(map(str, missing))})
    params = {"runs": ids, "per_stratum": per_stratum, "seed": seed}
    existing = CalibrationSample.objects.filter(name=name).first()
    if existing is not None:
        if existing.params != params:
            raise CalibrationError(
                _("a sample named %(name)r already exists with other parameters (%(params)s)")
                % {"name": name, "params": existing.params}
            )
        return existing
    strata = _candidates(ids)
    if not strata:
        raise CalibrationError(_("the chosen runs have no judged answers to sample"))
    rng = random.Random(seed)
    chosen: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for stratum in sorted(strata):
        units = sorted(strata[stratum], key=lambda u: (u[0], u[1]))
        for _key, item, result_pk in rng.sample(units, min(per_stratum, len(units))):
            chosen[result_pk].append((item, stratum))
    # Grading order: answers shuffled (seeded), the items of one answer together.
    order = sorted(chosen)
    rng.shuffle(order)
    with transaction.atomic():
        sample = CalibrationSample.objects.create(name=name, params=params, created_by=by)
        rows, position = [], 0
        for result_pk in order:
            for item, stratum in sorted(chosen[result_pk]):
                rows.append(
                    CalibrationItem(
                        sample=sample, turn_result_id=result_pk, item=item, stratum=stratum, position=position
                    )
                )
                position += 1
        CalibrationItem.objects.bulk_create(rows)
    return sample


def save_grade(
    *, sample: CalibrationSample, turn_result: TurnResult, item: int, grader: Any, label: str, note: str = ""
) -> PhysicianGrade:
    """The grader's own grade of a sampled item, created or replaced (nobody edits another's grade)."""
    if label not in GradeLabel.values:
        raise CalibrationError(_("unknown grade %(label)r: choose pass, fail or can't tell") % {"label": label})
    if not CalibrationItem.objects.filter(sample=sample, turn_result=turn_result, item=item).exists():
        raise CalibrationError(
            _("rubric item %(item)d of this answer is not in sample %(name)r") % {"item": item, "name": sample.name}
        )
    grade, _created = PhysicianGrade.objects.update_or_create(
        turn_result=turn_result, item=item, grader=grader, defaults={"label": label, "note": note.strip()}
    )
    return grade
