"""Reads for calibration: answer identity across rejudge runs, the grading queue, the grading screen,
and the (judge verdict, physician grade) pairs the agreement statistics are computed from."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _

from evaluation.calibration.compiled import COMPILED_JUDGE, has_compiled_items, verdicts_for
from evaluation.models import CalibrationItem, CalibrationSample, EvalRun, GradeLabel, PhysicianGrade, TurnResult
from scenarios.models import RubricItem

AnswerKey = tuple[int, str, int, str, str, int]
OBSERVATION_CHARS = 4000
HISTORY_TURNS = 3


def run_roots() -> dict[int, int]:
    """``{run id: id of the run that produced its answers}``: a rejudge run maps to its source."""
    parents = dict(EvalRun.objects.values_list("pk", "rejudge_of_id"))
    roots = {}
    for pk in parents:
        root, hops = pk, 0
        while parents.get(root) is not None and hops < len(parents):
            root, hops = parents[root], hops + 1
        roots[pk] = root
    return roots


def answer_key(result: TurnResult, roots: dict[int, int]) -> AnswerKey:
    """The same stored answer has the same key in a run and in every rejudge of it."""
    return (
        roots.get(result.run_id, result.run_id),
        result.session_id,
        result.turn_index,
        result.language,
        result.variant,
        result.trial,
    )


# --- grading -----------------------------------------------------------------------------------------


def _ungraded(sample: CalibrationSample, grader: Any):
    graded = PhysicianGrade.objects.filter(
        turn_result_id=OuterRef("turn_result_id"), item=OuterRef("item"), grader_id=grader.pk
    )
    return sample.items.annotate(done=Exists(graded)).filter(done=False)


def next_turn_result_id(*, sample: CalibrationSample, grader: Any) -> int | None:
    """The grader's next answer: the first in sample order with an item they have not graded."""
    first = _ungraded(sample, grader).order_by("position").values_list("turn_result_id", flat=True).first()
    return first


@dataclass(frozen=True)
class SampleProgress:
    sample: CalibrationSample
    n_items: int
    n_mine: int


def samples_with_progress(*, grader: Any) -> list[SampleProgress]:
    samples = list(CalibrationSample.objects.all())
    totals = defaultdict(int)
    for sample_id in CalibrationItem.objects.values_list("sample_id", flat=True):
        totals[sample_id] += 1
    mine = defaultdict(int)
    graded = PhysicianGrade.objects.filter(
        turn_result_id=OuterRef("turn_result_id"), item=OuterRef("item"), grader_id=grader.pk
    )
    for sample_id in CalibrationItem.objects.filter(Exists(graded)).values_list("sample_id", flat=True):
        mine[sample_id] += 1
    return [SampleProgress(s, totals[s.pk], mine[s.pk]) for s in samples]


@dataclass(frozen=True)
class GradeRow:
    item: int
    text: str
    is_safety: bool
    grade: PhysicianGrade | None


def _observation(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    return text if len(text) <= OBSERVATION_CHARS else text[:OBSERVATION_CHARS] + " …"


def grading_screen(*, sample: CalibrationSample, turn_result: TurnResult, grader: Any) -> dict[str, Any]:
    """What a physician sees: question, recent history, answer, retrieved observations, rubric items and
    their own grades. Blind by construction: nothing of ``verdicts``, scores or other graders is read."""
    trace = turn_result.trace or {}
    items = list(sample.items.filter(turn_result=turn_result).order_by("item").values_list("item", flat=True))
    rows = grading_screen_rows(turn_result=turn_result, items=items, grader=grader)
    earlier = (
        TurnResult.objects.filter(
            run_id=turn_result.run_id,
            session_id=turn_result.session_id,
            language=turn_result.language,
            variant=turn_result.variant,
            trial=turn_result.trial,
            turn_index__lt=turn_result.turn_index,
        )
        .order_by("-turn_index")
        .values_list("turn_index", "trace")[:HISTORY_TURNS]
    )
    history = [
        {"index": index, "request": (t or {}).get("request", ""), "answer": (t or {}).get("answer", "")}
        for index, t in reversed(list(earlier))
    ]
    observations = [
        {
            "name": call.get("name", ""),
            "arguments": json.dumps(call.get("arguments"), ensure_ascii=False),
            "observation": _observation(call.get("observation")),
        }
        for step in trace.get("steps") or []
        for call in step.get("calls") or []
        if "observation" in call
    ]
    return {
        "request": trace.get("request", ""),
        "answer": trace.get("answer", ""),
        "history": history,
        "observations": observations,
        "rows": rows,
    }


def grading_screen_rows(*, turn_result: TurnResult, items: list[int], grader: Any) -> list[GradeRow]:
    rubric = {
        r.idx: r
        for r in RubricItem.objects.filter(
            turn__session__session_id=turn_result.session_id, turn__index=turn_result.turn_index, idx__in=items
        )
    }
    mine = {
        g.item: g for g in PhysicianGrade.objects.filter(turn_result=turn_result, grader_id=grader.pk, item__in=items)
    }
    rows = []
    for idx in items:
        r = rubric.get(idx)
        text = ((r.text_zh or r.text_en) if turn_result.language == "zh" else r.text_en) if r else ""
        rows.append(GradeRow(idx, text, bool(r and r.is_safety), mine.get(idx)))
    return rows


# --- agreement ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """One judge verdict against one physician's grade of the same answer and rubric item."""

    judge: str
    run_id: int
    turn_result_id: int
    item: int
    grader: str
    language: str
    task_type: str
    is_safety: bool
    judge_passed: bool
    physician_passed: bool
    reason: str
    sample_id: int | None


@dataclass(frozen=True)
class GradedUnit:
    key: tuple[AnswerKey, int]
    language: str
    task_type: str
    labels: dict[str, bool]  # grader -> passed


def prompt_hash_of(manifest: dict[str, Any] | None) -> str:
    """The judge's prompt hash recorded in a run manifest ("" for the rules judge and older runs)."""
    judge = (manifest or {}).get("judge")
    return str(judge.get("prompt_hash") or "") if isinstance(judge, dict) else ""


def known_judges() -> list[str]:
    """Judges of stored runs, plus the rules judge on compiled items when there are any (recomputed)."""
    names = set(EvalRun.objects.values_list("judge", flat=True))
    if names and has_compiled_items():
        names.add(COMPILED_JUDGE)
    return sorted(names)


def graded_data(
    *, judge: str | None = None, run_id: int | None = None, grader_id: int | None = None, by_prompt: bool = False
) -> tuple[list[Comparison], list[GradedUnit]]:
    """Judge–physician pairs (one per grade and judge; a judge's earliest run on that answer when it
    judged it more than once, unless ``run_id`` picks the run) and the physician-graded units. ``grader_id``:
    that physician's grades only (what a reviewer may see: the grading screen hides the others' grades)."""
    if judge is not None and judge not in known_judges():
        raise ValueError(
            _("unknown judge %(judge)r; judges of stored runs: %(known)s")
            % {"judge": judge, "known": ", ".join(known_judges()) or _("none")}
        )
    if run_id is not None and not EvalRun.objects.filter(pk=run_id).exists():
        raise ValueError(_("no evaluation run with id %(id)d") % {"id": run_id})
    roots = run_roots()
    judges = dict(EvalRun.objects.values_list("pk", "judge"))
    # by_prompt (certification): an LLM judge whose prompt changed is another judge, so each prompt hash
    # keeps its own earliest verdict per answer instead of the name's earliest.
    prompts = dict(EvalRun.objects.values_list("pk", "manifest")) if by_prompt else {}
    prompts = {pk: prompt_hash_of(manifest) for pk, manifest in prompts.items()}
    grades = (
        PhysicianGrade.objects.exclude(label=GradeLabel.UNSURE)
        .select_related("grader", "turn_result")
        .defer("turn_result__trace", "turn_result__verdicts")
        .order_by("updated_at", "pk")
    )
    if grader_id is not None:
        grades = grades.filter(grader_id=grader_id)
    # (answer, item) -> grader -> (passed, graded turn result, sample containing it)
    by_unit: dict[tuple[AnswerKey, int], dict[str, tuple[bool, TurnResult]]] = defaultdict(dict)
    for g in grades:
        by_unit[(answer_key(g.turn_result, roots), g.item)][g.grader.get_username()] = (g.passed, g.turn_result)
    if not by_unit:
        return [], []
    sample_of = {}
    for tr_id, item, sample_id in CalibrationItem.objects.order_by("sample_id").values_list(
        "turn_result_id", "item", "sample_id"
    ):
        sample_of.setdefault((tr_id, item), sample_id)
    answer_keys = {key for key, _item in by_unit}
    family_runs = [pk for pk, root in roots.items() if root in {k[0] for k in answer_keys}]
    if run_id is not None:
        family_runs = [pk for pk in family_runs if pk == run_id]
    if judge is not None:
        family_runs = [pk for pk in family_runs if judges[pk] == judge]
    verdicts: dict[tuple[AnswerKey, int], dict[str, tuple[int, dict]]] = defaultdict(dict)
    rows = (
        TurnResult.objects.filter(run_id__in=family_runs, session_id__in={k[1] for k in answer_keys})
        .only("run_id", "session_id", "turn_index", "language", "variant", "trial", "verdicts")
        .order_by("run_id", "pk")
    )
    for result in rows:
        key = answer_key(result, roots)
        if key not in answer_keys:
            continue
        for v in result.verdicts or []:
            unit = (key, int(v["idx"]))
            if unit in by_unit and v.get("scored") and v.get("passed") is not None:
                identity = (judges[result.run_id], prompts.get(result.run_id, ""))
                verdicts[unit].setdefault(identity, (result.run_id, v))
    compiled = _compiled_verdicts(by_unit, judge=judge, run_id=run_id)
    comparisons = []
    units = []
    for unit in sorted(by_unit, key=repr):
        labels = by_unit[unit]
        first = next(iter(labels.values()))[1]
        units.append(GradedUnit(unit, first.language, first.task_type, {g: p for g, (p, _tr) in labels.items()}))
        # (judge, its run, verdict, grader, physician's label, graded answer): the judges' stored verdicts,
        # then the compiled checks' verdicts on the graded answer itself.
        pairs = [
            (judge_name, rid, v, grader, passed, tr)
            for (judge_name, _prompt), (rid, v) in sorted(verdicts.get(unit, {}).items())
            for grader, (passed, tr) in sorted(labels.items())
        ]
        for grader, (passed, tr) in sorted(labels.items()):
            v = compiled.get((tr.pk, unit[1]))
            if v is not None and v["scored"]:
                pairs.append((COMPILED_JUDGE, tr.run_id, v, grader, passed, tr))
        comparisons += [
            Comparison(
                judge=judge_name,
                run_id=rid,
                turn_result_id=tr.pk,
                item=unit[1],
                grader=grader,
                language=tr.language,
                task_type=tr.task_type,
                is_safety=bool(v.get("is_safety")),
                judge_passed=bool(v["passed"]),
                physician_passed=passed,
                reason=str(v.get("reason", "")),
                sample_id=sample_of.get((tr.pk, unit[1])),
            )
            for judge_name, rid, v, grader, passed, tr in pairs
        ]
    return comparisons, units


def _compiled_verdicts(by_unit: dict, *, judge: str | None, run_id: int | None) -> dict[tuple[int, int], dict]:
    """The rules judge's verdicts on the compiled items of the graded answers (unless another judge is asked for)."""
    if judge not in (None, COMPILED_JUDGE):
        return {}
    graded = {tr.pk for labels in by_unit.values() for _passed, tr in labels.values()}
    results = TurnResult.objects.filter(pk__in=graded).only("pk", "run_id", "session_id", "turn_index", "trace")
    if run_id is not None:
        results = results.filter(run_id=run_id)
    return verdicts_for(results, compile_checked=True)
