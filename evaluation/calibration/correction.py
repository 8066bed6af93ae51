"""Rogan–Gladen correction of a run's pass rates for its judge's errors, with bootstrap 95% intervals.

p_true = (p_obs + TNR − 1) / (TPR + TNR − 1), clipped to [0, 1]; undefined when TPR + TNR ≤ 1 (a judge no
better than chance). TPR and TNR are the judge's item-level rates from its current certification.

What is corrected, per language of the run:

- item pass rate (items passed / items scored): exact in expectation when the judge's item errors on the
  run's items have the calibration's TPR/TNR (non-differential: same rates whatever the model or turn);
- mean turn score: the same, by linearity (each turn's observed share has expectation
  TPR·s + (1 − TNR)·(1 − s) for its true share s), so no independence between items is needed;
- Pass@Turn(τ) (share of turns with score ≥ τ): corrected with the same item-level TPR/TNR, as if a turn's
  verdict were one test with the item's error rates. That holds for one-item turns or when a judge's errors
  within a turn go together; with independent item errors a turn's pass/fail error differs (it depends on
  the number of items and how close the true score is to τ). This is an approximation, stated on the page.

Intervals: percentile bootstrap with a fixed seed; each resample draws calibration items (all grades of one
rubric item of one answer together) and, independently, the run's sessions (all turns of a session together),
then corrects. Resamples where TPR + TNR ≤ 1 are dropped (their number is reported). Left out: pass@session,
pass^k, mRS by tier and slices stay uncorrected.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from evaluation.calibration.stats import BOOTSTRAP_REPS, BOOTSTRAP_SEED
from evaluation.metrics import TAUS
from evaluation.models import EvalRun, JudgeCertification

METRICS = ("item_pass_rate", "mean_turn_score", *(f"pass_at_turn_{tau}" for tau in TAUS))


def rogan_gladen(p_obs: float, *, tpr: float, tnr: float) -> float | None:
    youden = tpr + tnr - 1.0
    if youden <= 0:
        return None
    return min(1.0, max(0.0, (p_obs + tnr - 1.0) / youden))


@dataclass(frozen=True)
class CorrectedRate:
    metric: str
    observed: float
    corrected: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Correction:
    language: str
    n_sessions: int
    n_turns: int
    rates: list[CorrectedRate]
    reps: int
    dropped: int  # resamples with TPR + TNR ≤ 1


def _session_sums(turns: list[tuple[int, int]]) -> list[float]:
    """``[items passed, items scored, Σ turn score, turns, turns ≥ τ per τ…]`` of one session."""
    scores = [p / s for p, s in turns]
    return [
        float(sum(p for p, _s in turns)),
        float(sum(s for _p, s in turns)),
        sum(scores),
        float(len(turns)),
        *(float(sum(score >= tau for score in scores)) for tau in TAUS),
    ]


def _observed(sums: list[list[float]]) -> list[float]:
    total = [sum(col) for col in zip(*sums, strict=True)]
    passed, scored, score_sum, turns, *at_tau = total
    return [passed / scored, score_sum / turns, *(n / turns for n in at_tau)]


def _calibration_clusters(cert: JudgeCertification) -> list[tuple[int, int, int, int]]:
    """``(tp, fn, tn, fp)`` per calibration item from the certification's stored pairs."""
    clusters: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for key, judge_passed, physician_passed in cert.pairs:
        slot = (0 if judge_passed else 1) if physician_passed else (2 if not judge_passed else 3)
        clusters[str(key)][slot] += 1
    return [tuple(v) for _k, v in sorted(clusters.items())]  # type: ignore[misc]


def _rates(clusters: list[tuple[int, int, int, int]]) -> tuple[float, float] | None:
    tp = sum(c[0] for c in clusters)
    fn = sum(c[1] for c in clusters)
    tn = sum(c[2] for c in clusters)
    fp = sum(c[3] for c in clusters)
    if not tp + fn or not tn + fp:
        return None
    return tp / (tp + fn), tn / (tn + fp)


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


def run_sessions(run: EvalRun) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """``{language: {session id: [(items passed, items scored) per scored turn]}}`` (infrastructure errors out)."""
    out: dict[str, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
    rows = run.turn_results.filter(infra_error="", scored__gt=0).values_list(
        "language", "session_id", "passed", "scored"
    )
    for language, session_id, passed, scored in rows.order_by("language", "session_id", "pk"):
        out[language][session_id].append((passed, scored))
    return out


def correct_run(
    *, run: EvalRun, certification: JudgeCertification, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> list[Correction]:
    """Observed and corrected rates of ``run`` per language, with bootstrap 95% intervals."""
    clusters = _calibration_clusters(certification)
    point_rates = _rates(clusters)
    out = []
    for language, sessions in sorted(run_sessions(run).items()):
        sums = [_session_sums(turns) for _sid, turns in sorted(sessions.items())]
        observed = _observed(sums)
        corrected = [
            None if point_rates is None else rogan_gladen(p, tpr=point_rates[0], tnr=point_rates[1]) for p in observed
        ]
        rng = random.Random(f"{seed}:{run.pk}:{language}:{certification.data_hash}")
        draws: list[list[float]] = [[] for _ in observed]
        dropped = 0
        # Columns, so that a resample is a few sums over drawn indices (1000 resamples stay well under a second).
        cal_cols = [[c[k] for c in clusters] for k in range(4)]
        run_cols = [[s[k] for s in sums] for k in range(len(sums[0]))]
        cal_range, run_range = range(len(clusters)), range(len(sums))
        for _ in range(reps if point_rates is not None else 0):
            picks = rng.choices(cal_range, k=len(clusters))
            tp, fn, tn, fp = (sum(map(col.__getitem__, picks)) for col in cal_cols)
            picks = rng.choices(run_range, k=len(sums))
            totals = [sum(map(col.__getitem__, picks)) for col in run_cols]
            if not tp + fn or not tn + fp:
                dropped += 1
                continue
            tpr, tnr = tp / (tp + fn), tn / (tn + fp)
            passed, scored, score_sum, turns, *at_tau = totals
            values = [passed / scored, score_sum / turns, *(n / turns for n in at_tau)]
            fixed = [rogan_gladen(p, tpr=tpr, tnr=tnr) for p in values]
            if any(v is None for v in fixed):
                dropped += 1
                continue
            for bucket, value in zip(draws, fixed, strict=True):
                bucket.append(value)  # type: ignore[arg-type]
        rows = []
        for metric, obs, fix, values in zip(METRICS, observed, corrected, draws, strict=True):
            low = _percentile(values, 0.025) if values and fix is not None else None
            high = _percentile(values, 0.975) if values and fix is not None else None
            rows.append(CorrectedRate(metric, obs, fix, low, high))
        n_turns = sum(len(t) for t in sessions.values())
        out.append(Correction(language, len(sessions), n_turns, rows, reps if point_rates else 0, dropped))
    return out


def as_dict(corrections: list[Correction]) -> dict[str, Any]:
    return {
        c.language: {
            "n_sessions": c.n_sessions,
            "n_turns": c.n_turns,
            "reps": c.reps,
            "dropped": c.dropped,
            "rates": {r.metric: [r.observed, r.corrected, r.low, r.high] for r in c.rates},
        }
        for c in corrections
    }
