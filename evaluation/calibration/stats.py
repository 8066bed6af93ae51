"""Agreement of each judge with physicians, and of physicians with each other.

Units for judge–physician agreement are (verdict, grade) pairs: an item two physicians graded counts
once per physician. "Can't tell" grades and unscored verdicts are left out. κ's 95% interval is a
percentile bootstrap over those units with a fixed seed, so the page and the command agree exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotations.agreement import (
    PairStats,
    cohens_kappa,
    format_statistic,
    krippendorff_alpha_nominal,
    pairwise,
    percent_agreement,
)
from evaluation.calibration.compiled import COMPILED_JUDGE, judge_pairs
from evaluation.calibration.selectors import Comparison, GradedUnit, graded_data

# The paper's judge–annotator agreement, shown beside ours.
PAPER_AGREEMENT = 0.9537
BOOTSTRAP_REPS = 1000
BOOTSTRAP_SEED = 20240601


@dataclass(frozen=True)
class Figure:
    n: int
    percent: float
    kappa: float
    ci_low: float
    ci_high: float

    def cells(self) -> list[str]:
        """How the figure is printed on the page and by the command."""
        ci = "—" if math.isnan(self.ci_low) else f"[{format_statistic(self.ci_low)}, {format_statistic(self.ci_high)}]"
        return [str(self.n), format_statistic(self.percent, percent=True), format_statistic(self.kappa), ci]


def bootstrap_kappa_ci(
    a: Sequence[Hashable], b: Sequence[Hashable], *, seed: int = BOOTSTRAP_SEED, reps: int = BOOTSTRAP_REPS
) -> tuple[float, float]:
    """Percentile 95% interval of κ over ``reps`` resamples of the units (NaN, NaN when undefined)."""
    n = len(a)
    if n < 2:
        return math.nan, math.nan
    rng = random.Random(seed)
    values = []
    for _ in range(reps):
        picks = [rng.randrange(n) for _ in range(n)]
        k = cohens_kappa([a[i] for i in picks], [b[i] for i in picks])
        if not math.isnan(k):
            values.append(k)
    if not values:
        return math.nan, math.nan
    values.sort()
    low = values[math.floor(0.025 * (len(values) - 1))]
    high = values[math.ceil(0.975 * (len(values) - 1))]
    return low, high


def figure(a: Sequence[Hashable], b: Sequence[Hashable], *, seed: int = BOOTSTRAP_SEED) -> Figure:
    low, high = bootstrap_kappa_ci(a, b, seed=seed)
    return Figure(len(a), percent_agreement(a, b), cohens_kappa(a, b), low, high)


@dataclass
class JudgeReport:
    judge: str
    runs: list[int]
    overall: Figure
    slices: dict[str, dict[str, Figure]]  # "language" / "task_type" / "item" -> value -> figure
    disagreements: list[Comparison]


@dataclass
class PhysicianReport:
    n_units: int
    overall: Figure  # the first two graders of every unit graded twice or more
    alpha: float
    pairs: list[PairStats] = field(default_factory=list)


@dataclass
class AgreementReport:
    judges: list[JudgeReport]
    physicians: PhysicianReport
    n_grades: int
    paper: float = PAPER_AGREEMENT
    # The rules judge on compiled items against each other judge, over every stored answer: (judge, figure).
    judge_pairs: list[tuple[str, Figure]] = field(default_factory=list)


def _figure_of(comparisons: list[Comparison]) -> Figure:
    return figure([c.judge_passed for c in comparisons], [c.physician_passed for c in comparisons])


SLICES: dict[str, Callable[[Comparison], str]] = {
    "language": lambda c: c.language,
    "task_type": lambda c: c.task_type,
    "item": lambda c: "safety" if c.is_safety else "non-safety",
}


def judge_report(judge: str, comparisons: list[Comparison]) -> JudgeReport:
    slices = {}
    for name, key in SLICES.items():
        groups: dict[str, list[Comparison]] = {}
        for c in comparisons:
            groups.setdefault(key(c), []).append(c)
        slices[name] = {value: _figure_of(groups[value]) for value in sorted(groups)}
    return JudgeReport(
        judge=judge,
        runs=sorted({c.run_id for c in comparisons}),
        overall=_figure_of(comparisons),
        slices=slices,
        disagreements=[c for c in comparisons if c.judge_passed != c.physician_passed],
    )


def physician_report(units: list[GradedUnit]) -> PhysicianReport:
    multi = [u for u in units if len(u.labels) >= 2]
    a, b = [], []
    for u in multi:
        first, second = sorted(u.labels)[:2]
        a.append(u.labels[first])
        b.append(u.labels[second])
    ratings: dict[Any, dict[Any, Any]] = {u.key: dict(u.labels) for u in multi}
    return PhysicianReport(
        n_units=len(multi),
        overall=figure(a, b),
        alpha=krippendorff_alpha_nominal(ratings),
        pairs=[p for p in pairwise(ratings) if p.n],
    )


def agreement_report(
    *, judge: str | None = None, run_id: int | None = None, grader_id: int | None = None
) -> AgreementReport:
    """Everything the agreement page and ``judge_agreement`` show (ValueError for unknown judge/run);
    ``grader_id``: over that physician's grades only (a reviewer's page: no other physician's grade)."""
    comparisons, units = graded_data(judge=judge, run_id=run_id, grader_id=grader_id)
    by_judge: dict[str, list[Comparison]] = {}
    for c in comparisons:
        by_judge.setdefault(c.judge, []).append(c)
    pairs = [] if judge not in (None, COMPILED_JUDGE) else judge_pairs(run_id=run_id)
    return AgreementReport(
        judges=[judge_report(name, by_judge[name]) for name in sorted(by_judge)],
        physicians=physician_report(units),
        n_grades=sum(len(u.labels) for u in units),
        judge_pairs=[(p.judge, figure(p.rules, p.other)) for p in pairs],
    )


def judge_pair_rows(report: AgreementReport) -> list[list[str]]:
    """``[rules (compiled), other judge, n, %, κ, 95% CI]`` rows: the same strings on the page and in the command."""
    return [[COMPILED_JUDGE, other, *fig.cells()] for other, fig in report.judge_pairs]


def table_rows(report: AgreementReport) -> list[list[str]]:
    """``[judge, slice, value, n, %, κ, 95% CI]`` rows: the same strings on the page and in the command."""
    rows = []
    for j in report.judges:
        rows.append([j.judge, "all", "all", *j.overall.cells()])
        for name, groups in j.slices.items():
            for value, fig in groups.items():
                rows.append([j.judge, name, value, *fig.cells()])
    return rows


def physician_pair_rows(report: AgreementReport) -> list[list[str]]:
    return [
        [str(p.rater_a), str(p.rater_b), str(p.n), format_statistic(p.percent, percent=True), format_statistic(p.kappa)]
        for p in report.physicians.pairs
    ]
