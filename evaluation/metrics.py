"""Run metrics as pure functions over turn rows (plain dicts; see :func:`row_of`).

Definitions (values are fractions 0–1):

* turn score = items passed / items scored; a turn with nothing scored (or an infrastructure
  error) has no score and is left out of every score-based metric (infra errors are counted apart);
* a *session unit* is one play of a session: (session, variant, trial) within one language;
* mRS = mean over session units of the unit's mean turn score, per tier (``L1``–``L3``) and ``all``;
* Pass@Turn(τ) = share of scored turns with score ≥ τ; Pass@Session(τ) = share of session units
  whose every scored turn has score ≥ τ;
* pass^k (τ-bench): per task (session, turn, variant) with n trials and c passes (score ≥ τ),
  C(c, k) / C(n, k), averaged over tasks with n ≥ k; the flip share is the share of tasks with
  n ≥ 2 whose pass/fail differs between trials;
* bootstrap 95% CI: sessions resampled with replacement (seeded), percentile interval.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from math import comb
from statistics import mean
from typing import Any

TAUS = (0.6, 0.75)
PASS_HAT_TAU = 0.75
SLICE_DIMENSIONS = ("language", "scenario", "tier", "task_type", "subtype", "tool_source", "variant")
Row = dict[str, Any]


def turn_score(*, passed: int, scored: int) -> float | None:
    return passed / scored if scored else None


def scored_rows(rows: Iterable[Row]) -> list[Row]:
    return [r for r in rows if r.get("score") is not None and not r.get("infra_error")]


def _units(rows: Iterable[Row]) -> dict[tuple[Any, ...], list[Row]]:
    units: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for r in scored_rows(rows):
        units[(r["session_id"], r.get("language"), r.get("variant"), r.get("trial", 0))].append(r)
    return units


def session_scores(rows: Iterable[Row]) -> dict[tuple[Any, ...], float]:
    return {key: mean(r["score"] for r in turns) for key, turns in _units(rows).items()}


def mrs_value(rows: Iterable[Row]) -> float | None:
    scores = list(session_scores(rows).values())
    return mean(scores) if scores else None


def mrs(rows: list[Row]) -> dict[str, float | None]:
    out = {f"L{tier}": mrs_value([r for r in rows if r["tier"] == tier]) for tier in (1, 2, 3)}
    out["all"] = mrs_value(rows)
    return out


def pass_at_turn(rows: Iterable[Row], tau: float) -> float | None:
    scores = [r["score"] for r in scored_rows(rows)]
    return sum(s >= tau for s in scores) / len(scores) if scores else None


def pass_at_session(rows: Iterable[Row], tau: float) -> float | None:
    units = _units(rows)
    if not units:
        return None
    return sum(all(r["score"] >= tau for r in turns) for turns in units.values()) / len(units)


def _tasks(rows: Iterable[Row], tau: float) -> list[tuple[int, int]]:
    """(n trials, c passes) per task (session, language, turn, variant)."""
    groups: dict[tuple[Any, ...], list[bool]] = defaultdict(list)
    for r in scored_rows(rows):
        groups[(r["session_id"], r.get("language"), r["turn_index"], r.get("variant"))].append(r["score"] >= tau)
    return [(len(v), sum(v)) for v in groups.values()]


def pass_hat_k(rows: Iterable[Row], *, k_max: int, tau: float = PASS_HAT_TAU) -> dict[str, float | None]:
    """Unbiased pass^k for k = 1..k_max: mean over tasks of C(c, k) / C(n, k) (tasks with n ≥ k)."""
    tasks = _tasks(rows, tau)
    out: dict[str, float | None] = {}
    for k in range(1, k_max + 1):
        eligible = [(n, c) for n, c in tasks if n >= k]
        out[str(k)] = mean(comb(c, k) / comb(n, k) for n, c in eligible) if eligible else None
    return out


def flip_share(rows: Iterable[Row], *, tau: float = PASS_HAT_TAU) -> float | None:
    repeated = [(n, c) for n, c in _tasks(rows, tau) if n >= 2]
    return sum(0 < c < n for n, c in repeated) / len(repeated) if repeated else None


def unit_values(rows: Iterable[Row], *, tau: float | None = None) -> dict[str, list[float]]:
    """Per session, one value per session unit: its mean turn score, or (with ``tau``) 1.0/0.0 for
    whether every turn passed. mRS and Pass@Session are the means of these values over all units."""
    out: dict[str, list[float]] = defaultdict(list)
    for key, turns in _units(rows).items():
        if tau is None:
            out[key[0]].append(mean(r["score"] for r in turns))
        else:
            out[key[0]].append(float(all(r["score"] >= tau for r in turns)))
    return dict(out)


def bootstrap_ci(values: dict[str, list[float]], *, n_boot: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """Percentile 95% interval of the mean unit value, sessions resampled with replacement (seeded)."""
    ids = sorted(values)
    if not ids:
        return None
    sums = [sum(values[i]) for i in ids]
    counts = [len(values[i]) for i in ids]
    rng = random.Random(seed)
    estimates = []
    for _ in range(n_boot):
        drawn = [rng.randrange(len(ids)) for _ in ids]
        estimates.append(sum(sums[j] for j in drawn) / sum(counts[j] for j in drawn))
    estimates.sort()
    return estimates[int(0.025 * (n_boot - 1))], estimates[round(0.975 * (n_boot - 1))]


def safety_failure_rate(rows: Iterable[Row]) -> float | None:
    scored = failed = 0
    for r in rows:
        for v in r.get("verdicts") or []:
            if v.get("is_safety") and v.get("scored"):
                scored += 1
                failed += not v.get("passed")
    return failed / scored if scored else None


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_round(v) for v in value]
    return value


def language_metrics(rows: list[Row], *, trials: int, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    out = {
        "mRS": mrs(rows),
        "pass_at_turn": {str(t): pass_at_turn(rows, t) for t in TAUS},
        "pass_at_session": {str(t): pass_at_session(rows, t) for t in TAUS},
        "pass_hat_k": pass_hat_k(rows, k_max=trials),
        "flip_share": flip_share(rows),
        "ci95": {
            "mRS": bootstrap_ci(unit_values(rows), n_boot=n_boot, seed=seed),
            **{f"pass_at_session_{t}": bootstrap_ci(unit_values(rows, tau=t), n_boot=n_boot, seed=seed) for t in TAUS},
        },
        "safety_failure_rate": safety_failure_rate(rows),
        "n_sessions": len({r["session_id"] for r in rows}),
        "n_turns": len(rows),
        "n_turns_scored": len(scored_rows(rows)),
        "n_items_scored": sum(r.get("scored", 0) for r in rows),
        "n_items_unscored": sum(r.get("unscored", 0) for r in rows),
        # turns played whose every item was unscored: reported as unscored, never as passed or failed
        "n_turns_unscored": sum(1 for r in rows if not r.get("infra_error") and r.get("score") is None),
        "scored_share": scored_share(rows),
    }
    return _round(out)


def scored_share(rows: Iterable[Row]) -> float | None:
    """Share of the rubric items of played turns that the judge could score (None: no items)."""
    scored = sum(r.get("scored", 0) for r in rows if not r.get("infra_error"))
    total = scored + sum(r.get("unscored", 0) for r in rows if not r.get("infra_error"))
    return scored / total if total else None


LOW_SCORED_SHARE = 0.5  # a run scored on less than this share of its items is marked on the leaderboard


def slices(rows: list[Row]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for dim in SLICE_DIMENSIONS:
        groups: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            groups[str(r.get(dim))].append(r)
        out[dim] = {}
        for value, group in sorted(groups.items()):
            scores = [r["score"] for r in scored_rows(group)]
            entry: dict[str, Any] = {
                "n_turns": len(group),
                "mean_turn_score": mean(scores) if scores else None,
                "pass_at_turn": {str(t): pass_at_turn(group, t) for t in TAUS},
            }
            if dim in {"language", "scenario", "tier", "variant"}:  # whole sessions: mRS is meaningful
                entry["mRS"] = mrs_value(group)
                entry["pass_at_session"] = {str(t): pass_at_session(group, t) for t in TAUS}
            out[dim][value] = _round(entry)
    return out


def usage(rows: Iterable[Row]) -> dict[str, Any]:
    rows = list(rows)
    totals = defaultdict(float)
    unknown_cost = False
    latencies = []
    for r in rows:
        u = r.get("usage") or {}
        for key in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens", "model_calls"):
            totals[key] += u.get(key, 0) or 0
        if u.get("cost_usd") is None and u.get("model_calls"):
            unknown_cost = True
        totals["cost_usd"] += u.get("cost_usd") or 0.0
        latencies.append((r.get("timing") or {}).get("wall_s", 0.0))
    return _round(
        {
            **{k: int(v) for k, v in totals.items() if k != "cost_usd"},
            "cost_usd": None if unknown_cost else totals["cost_usd"],
            "turn_latency_mean_s": mean(latencies) if latencies else None,
            "turn_latency_max_s": max(latencies) if latencies else None,
        }
    )


def errors(rows: Iterable[Row]) -> dict[str, Any]:
    infra: dict[str, int] = defaultdict(int)
    out = {
        "invalid_calls": 0,
        "tool_faults": 0,
        "unknown_arguments": 0,
        "replay_misses": 0,
        "replay_language_fallbacks": 0,
        "step_limit_turns": 0,
        "judge_errors": 0,
    }
    for r in rows:
        if r.get("infra_error"):
            infra[r["infra_error"]] += 1
        out["invalid_calls"] += r.get("invalid_calls", 0)
        out["tool_faults"] += r.get("tool_faults", 0)
        out["unknown_arguments"] += r.get("unknown_arguments", 0)
        out["replay_misses"] += r.get("replay_misses", 0)
        out["replay_language_fallbacks"] += r.get("replay_language_fallbacks", 0)
        out["step_limit_turns"] += r.get("end_reason") == "step_limit"
        out["judge_errors"] += bool(r.get("judge_error"))
    return {**out, "infra": dict(infra), "infra_total": sum(infra.values())}
