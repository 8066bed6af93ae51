"""``summary.json`` (the documented contract), ``turns.jsonl`` and the printed table of a run.

``summary.json``::

    {"run_id", "model", "judge", "snapshot", "status", "manifest": {...},
     "pending": {"turns", "not_played", "infra_error", "expected_turns"},
     "metrics": {"<lang>": {"mRS": {"L1", "L2", "L3", "all"}, "pass_at_turn": {"0.6", "0.75"},
                            "pass_at_session": {"0.6", "0.75"}, "pass_hat_k": {"1", ...}, "flip_share",
                            "ci95": {"mRS": [lo, hi], "pass_at_session_0.6": [...], ...},
                            "safety_failure_rate", "n_sessions", "n_turns", "n_turns_scored",
                            "n_items_scored", "n_items_unscored", "n_turns_unscored", "scored_share"}},
     "slices": {"language"|"scenario"|"tier"|"task_type"|"subtype"|"tool_source"|"variant": {value: {...}}},
     "usage": {"prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens", "model_calls",
               "cost_usd", "wall_s", "elapsed_s", "model_s", "backoff_s", "tools_s", "harness_s",
               "turn_latency_mean_s", "turn_latency_max_s",
               "judge": {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "failed_calls"},
               "total_cost_usd"},
     "errors": {"infra": {kind: n}, "infra_total", "invalid_calls", "tool_faults", "unknown_arguments",
                "replay_misses", "replay_language_fallbacks", "step_limit_turns", "judge_errors",
                "truncations", "truncated_turns", "model_errors", "model_error_turns"}}

``status`` is ``finished`` only when ``pending.turns`` is 0; a run whose play ended with turns not
played or ended by an infrastructure error is ``partial`` (``runeval --resume`` plays them).
``pending.expected_turns`` is every turn of the run's jobs; ``not_played`` never started (the rest of a
session after an infrastructure error, or an interrupted run), ``infra_error`` are stored but will be
played again.

``wall_s`` is the time spent playing (summed over the first play and each resume, not the gaps
between them); ``elapsed_s`` the calendar time from start to the end of the last play. Per turn,
``model_s`` is time in model calls without retry backoff, ``backoff_s`` the waits between attempts,
``harness_s`` the rest besides the tools. ``judge`` is the LLM judge's usage (zeros for the rules
judge); ``total_cost_usd`` = model + judge (``null`` when either is unknown).

``truncations``: model replies cut off at the output limit (``finish_reason: "length"``);
``model_errors``: replies the endpoint could not produce because of the model's own output (e.g. a tool
call it could not parse), which end the turn as the model's failure, not an infrastructure error.

``unknown_arguments``: arguments of the model's calls that the tool contract does not know, dropped by
the tool layer (one per warning in the call's result; the call itself ran).

Values are fractions 0–1 (``null`` when nothing could be computed); ``turns.jsonl`` has one object per
evaluated turn with its full trace and verdicts.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from evaluation import metrics
from evaluation.models import EvalRun, TurnResult
from evaluation.playing import pending_turns

_JUDGE_KEYS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "failed_calls")
_TIMING_KEYS = ("model_s", "backoff_s", "tools_s", "harness_s")


# What identifies and slices a turn result (summary rows, turns.jsonl, the Inspect log's sample metadata).
IDENTITY_FIELDS = (
    "session_id",
    "turn_index",
    "language",
    "variant",
    "trial",
    "scenario",
    "tier",
    "task_type",
    "subtype",
    "tool_source",
)


def identity_of(result: TurnResult) -> dict[str, Any]:
    return {name: getattr(result, name) for name in IDENTITY_FIELDS}


def _identity(result: TurnResult) -> dict[str, Any]:
    """Identity and score of a turn result: shared by summary rows and turns.jsonl."""
    return {
        **identity_of(result),
        "score": result.score,
        "passed": result.passed,
        "scored": result.scored,
        "unscored": result.unscored,
        "infra_error": result.infra_error,
        "verdicts": result.verdicts,
    }


def row_of(result: TurnResult) -> dict[str, Any]:
    trace = result.trace or {}
    return {
        **_identity(result),
        "usage": trace.get("usage") or {},
        "timing": trace.get("timing") or {},
        "invalid_calls": trace.get("invalid_calls", 0),
        "tool_faults": trace.get("tool_faults", 0),
        "unknown_arguments": trace.get("unknown_arguments", 0),
        "replay_misses": trace.get("replay_misses", 0),
        "replay_language_fallbacks": trace.get("replay_language_fallbacks", 0),
        "end_reason": trace.get("end_reason"),
        "judge_error": trace.get("judge_error", ""),
        "truncations": trace.get("truncations", 0),
        "model_errors": trace.get("model_errors", 0),
        "judge_usage": trace.get("judge_usage") or {},
    }


def judge_usage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The LLM judge's calls, tokens and cost over the run (``cost_usd`` null if any price is unknown)."""
    used = [r["judge_usage"] for r in rows if r.get("judge_usage")]
    out: dict[str, Any] = {key: sum(int(u.get(key) or 0) for u in used) for key in _JUDGE_KEYS}
    unknown = any(u.get("cost_usd") is None and u.get("calls", 0) > u.get("cache_hits", 0) for u in used)
    out["cost_usd"] = None if unknown else round(sum(float(u.get("cost_usd") or 0.0) for u in used), 10)
    return out


def time_totals(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {key: round(sum(float((r.get("timing") or {}).get(key) or 0.0) for r in rows), 3) for key in _TIMING_KEYS}


def quality_errors(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "truncations": sum(int(r.get("truncations") or 0) for r in rows),
        "truncated_turns": sum(bool(r.get("truncations")) for r in rows),
        "model_errors": sum(int(r.get("model_errors") or 0) for r in rows),
        "model_error_turns": sum(bool(r.get("model_errors")) for r in rows),
    }


def build_summary(*, run: EvalRun, n_boot: int = 1000) -> dict[str, Any]:
    # Streamed: a row keeps a few numbers of its trace, not the trace (the gold observations the tools returned).
    rows = [row_of(r) for r in run.turn_results.all().iterator(chunk_size=500)]
    trials = int((run.manifest.get("parameters") or {}).get("trials") or 1)
    languages = sorted({r["language"] for r in rows})
    dataset = run.manifest.get("dataset") or {}
    elapsed = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    wall = run.active_s if run.active_s else elapsed
    usage = metrics.usage(rows)
    judge = judge_usage(rows)
    costs = (usage.get("cost_usd"), judge["cost_usd"])
    return {
        "run_id": run.pk,
        "model": run.model,
        "judge": run.judge,
        "snapshot": dataset.get("label"),
        "status": run.status,
        "pending": pending_turns(run=run).as_dict(),
        "manifest": run.manifest,
        "metrics": {
            lang: metrics.language_metrics([r for r in rows if r["language"] == lang], trials=trials, n_boot=n_boot)
            for lang in languages
        },
        "slices": metrics.slices(rows),
        "usage": {
            **usage,
            "wall_s": round(wall, 3) if wall is not None else None,
            "elapsed_s": round(elapsed, 3) if elapsed is not None else None,
            **time_totals(rows),
            "judge": judge,
            "total_cost_usd": None if None in costs else round(sum(costs), 10),
        },
        "errors": {**metrics.errors(rows), **quality_errors(rows)},
    }


def turn_line(result: TurnResult) -> dict[str, Any]:
    return {"run_id": result.run_id, **_identity(result), "trace": result.trace}


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        write(fh)
    os.replace(tmp, path)


def write_outputs(*, run: EvalRun, output_dir: Path, summary: dict[str, Any]) -> tuple[Path, Path]:
    output_dir.mkdir(parents=True, exist_ok=True)
    summary_path, turns_path = output_dir / "summary.json", output_dir / "turns.jsonl"
    _atomic_write(summary_path, lambda fh: json.dump(summary, fh, ensure_ascii=False, indent=2, default=str))

    def lines(fh: Any) -> None:
        for result in run.turn_results.all().iterator(chunk_size=500):
            fh.write(json.dumps(turn_line(result), ensure_ascii=False, default=str) + "\n")

    _atomic_write(turns_path, lines)
    EvalRun.objects.filter(pk=run.pk).update(summary=summary, output_dir=str(output_dir))
    return summary_path, turns_path


def _pct(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def summary_table(summary: dict[str, Any]) -> Any:
    """A rich Table: one row per language with the paper's columns."""
    from rich.table import Table

    table = Table(title=f"run {summary['run_id']} · {summary['model']} · judge {summary['judge']} (%)")
    for name in ("lang", "mRS L1", "L2", "L3", "all", "95% CI", "P@T .60", "P@T .75", "P@S .60", "P@S .75"):
        table.add_column(name, justify="right")
    table.add_column("items scored/unscored", justify="right")
    table.add_column("scored %", justify="right")
    table.add_column("turns unscored", justify="right")
    for lang, m in summary["metrics"].items():
        ci = m["ci95"]["mRS"]
        table.add_row(
            lang,
            _pct(m["mRS"]["L1"]),
            _pct(m["mRS"]["L2"]),
            _pct(m["mRS"]["L3"]),
            _pct(m["mRS"]["all"]),
            f"{_pct(ci[0])}–{_pct(ci[1])}" if ci else "—",
            _pct(m["pass_at_turn"]["0.6"]),
            _pct(m["pass_at_turn"]["0.75"]),
            _pct(m["pass_at_session"]["0.6"]),
            _pct(m["pass_at_session"]["0.75"]),
            f"{m['n_items_scored']}/{m['n_items_unscored']}",
            _pct(m.get("scored_share")),
            str(m.get("n_turns_unscored", 0)),
        )
    return table


def unscored_notice(summary: dict[str, Any]) -> str | None:
    """What the rules judge could not score, and what to do about it (None when it scored everything)."""
    metrics_ = summary.get("metrics") or {}
    unscored = sum(m.get("n_items_unscored", 0) for m in metrics_.values())
    if not unscored:
        return None
    total = unscored + sum(m.get("n_items_scored", 0) for m in metrics_.values())
    turns = sum(m.get("n_turns_unscored", 0) for m in metrics_.values())
    text = (
        f"{unscored} of {total} rubric items could not be scored by the {summary.get('judge')} judge "
        f"(no machine check); {turns} turn(s) had no scored item and are reported as unscored, not as passed "
        "or failed. The figures cover the scored items only."
    )
    if summary.get("judge") == "rules":
        text += (
            f" To score every item, rejudge with an LLM judge: "
            f"manage.py runeval --rejudge {summary.get('run_id')} --judge <model> --judge-base-url <url>"
        )
    return text


def errors_line(summary: dict[str, Any]) -> str:
    """The run's error counts in one line, as runeval prints them under its table."""
    errs = summary["errors"]
    by_kind = f" {errs['infra']}" if errs["infra"] else ""
    return (
        f"infra errors: {errs['infra_total']}{by_kind}; invalid tool calls: "
        f"{errs['invalid_calls']}; replay misses: {errs['replay_misses']}; "
        f"patient replayed in the other language: {errs.get('replay_language_fallbacks', 0)}; "
        f"judge errors: {errs['judge_errors']}; replies cut at the output limit: {errs['truncations']} "
        f"(in {errs['truncated_turns']} turns); model output the server could not parse: "
        f"{errs['model_errors']}"
    )


class turn_progress:
    """A tqdm bar of turns shared by the playing threads: ``update(n)`` under a lock."""

    def __init__(self, *, total: int, quiet: bool, file: Any) -> None:
        from tqdm import tqdm  # imported on use: runeval's start-up stays light

        self.bar = tqdm(total=total, unit="turn", disable=quiet, file=file)
        self.lock = threading.Lock()

    def __enter__(self) -> Any:
        def update(n: int) -> None:
            with self.lock:
                self.bar.update(n)

        return update

    def __exit__(self, *exc: object) -> None:
        self.bar.close()
