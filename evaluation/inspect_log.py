"""A run as an Inspect AI evaluation log (``.eval``), written with the ``inspect-ai`` package's own writer.

Model developers open Inspect logs with ``inspect view`` and read them with ``inspect_ai.log``; this
module turns a stored run into one (``runeval --log-format inspect``, ``manage.py export_inspect RUN_ID``):

* one **sample** per turn result: ``id`` ``<session_id>/t<turn>/<language>/<variant>``, ``epoch`` = trial + 1;
  ``messages`` = the conversation as the model saw it at the turn's last call (the protocol's opening
  messages, the earlier turns as the protocol carried them, then the turn's own messages: the request,
  the model's tool calls, the tool results, the answer); ``target`` = the gold answer;
* **scores** per sample: ``rubric`` (items passed / items scored, NaN when nothing was scored; the
  verdicts with the judge's reasons in its metadata), ``items`` (each rubric item ``C``/``I``, ``None``
  when unscored) and the turn's pass at τ 0.60 and 0.75 (``C``/``I``);
* the turn's **transcript** as Inspect events (a model event per call, a tool event per result, a score event per
  score: :mod:`evaluation.inspect_events`), so ``inspect view``'s Transcript tab shows the turn step by step;
* the **run manifest**, status and PhysReview's own metrics (``summary.json``'s ``metrics``) as the log's
  metadata; the run's pooled scores as the log's results.

Nothing is recomputed: scores are the stored ``TurnResult`` rows, so the log, the results pages and
``summary.json`` agree. The log is written to a temporary file and renamed (nothing half-written).
"""

from __future__ import annotations

import math
import os
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from evaluation.dataset import EvalSession
from evaluation.inspect_conversation import RunSessions, chat_messages, converted_count, run_protocol, with_history
from evaluation.inspect_events import transcript_events
from evaluation.metrics import TAUS
from evaluation.models import EvalRun, EvalStatus, TurnResult
from evaluation.reports import identity_of

TASK_NAME = "physreview"
_STATUS = {EvalStatus.FINISHED: "success", EvalStatus.FAILED: "error", EvalStatus.RUNNING: "started"}
# partial and interrupted runs: "cancelled" (Inspect's word for an evaluation stopped before its end)


def log_file_name(*, run: EvalRun) -> str:
    """Inspect's own naming (``<ISO timestamp>_<task>_<id>.eval``), so ``inspect view`` lists it by date."""
    return f"{run.started_at:%Y-%m-%dT%H-%M-%S}+00-00_{TASK_NAME}_run{run.pk}.eval"


def write_inspect_log(*, run: EvalRun, output_dir: Path, summary: dict[str, Any] | None = None) -> Path:
    """Write ``run`` as ``<output_dir>/<log_file_name>`` and return the path (temporary file + rename)."""
    from inspect_ai.log import write_eval_log

    eval_log = build_eval_log(run=run, summary=summary)
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / log_file_name(run=run)
    fd, tmp = tempfile.mkstemp(prefix=".inspect-", suffix=".eval", dir=output_dir)
    os.close(fd)
    try:
        write_eval_log(eval_log, tmp, format="eval")
        os.chmod(tmp, 0o644)  # as summary.json beside it (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def build_eval_log(*, run: EvalRun, summary: dict[str, Any] | None = None) -> Any:
    """The run as an ``inspect_ai.log.EvalLog`` (samples included)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSpec, EvalStats

    summary = summary if summary is not None else (run.summary or {})
    manifest = run.manifest or {}
    dataset = manifest.get("dataset") or {}
    results = list(run.turn_results.all().order_by("session_id", "language", "variant", "trial", "turn_index"))
    sessions = RunSessions(run=run)
    samples = [
        _sample(run=run, result=r, history=h, session=sessions.get(r.session_id))
        for r, h in with_history(results, protocol=run_protocol(run), sessions=sessions)
    ]
    params = manifest.get("parameters") or {}
    spec = EvalSpec(
        run_id=f"physreview-run-{run.pk}",
        created=run.started_at.isoformat(),
        task=TASK_NAME,
        task_id=f"run{run.pk}",
        task_display_name=f"PhysReview run {run.pk} ({dataset.get('label') or 'db'})",
        task_description="PhysAssistBench-style clinical sessions: EHR tools, replayed patient, rubric judge",
        task_args={k: params.get(k) for k in ("languages", "variants", "trials", "protocol", "max_steps")},
        dataset=EvalDataset(
            name=str(dataset.get("label") or "db"),
            location=f"snapshot {dataset['label']}" if dataset.get("source") == "snapshot" else "database",
            samples=len(samples),
            sample_ids=sorted({s.id for s in samples}),
        ),
        model=run.model,
        model_base_url=(manifest.get("endpoint") or {}).get("base_url"),
        config=EvalConfig(epochs=int(params.get("trials") or 1)),
        packages=_packages(),
        metadata={
            "physreview_run_id": run.pk,
            "status": run.status,
            "judge": run.judge,
            "rejudge_of": run.rejudge_of_id,
            "manifest": manifest,
            "metrics": summary.get("metrics") or {},
            "pending": summary.get("pending") or {},
        },
    )
    status = _STATUS.get(run.status, "cancelled")
    return EvalLog(
        status=status,
        eval=spec,
        results=_results(results=results, summary=summary),
        stats=EvalStats(
            started_at=run.started_at.isoformat(),
            completed_at=run.finished_at.isoformat() if run.finished_at else "",
            model_usage=_usage_total(run=run, results=results),
        ),
        error=EvalError(message=run.error, traceback="", traceback_ansi="")
        if status == "error" and run.error
        else None,
        samples=samples,
    )


# --- samples and scores ------------------------------------------------------------------------------


def sample_id(result: TurnResult) -> str:
    return f"{result.session_id}/t{result.turn_index}/{result.language}/{result.variant}"


def _sample(*, run: EvalRun, result: TurnResult, history: list[dict[str, Any]], session: EvalSession | None) -> Any:
    from inspect_ai.log import EvalError, EvalSample, condense_sample
    from inspect_ai.model import ModelOutput

    trace = result.trace or {}
    turn = next((t for t in session.turns if t.index == result.turn_index), None) if session else None
    target = (turn.answers.get(result.language) or turn.answers.get("en") or "") if turn else ""
    timing = trace.get("timing") or {}
    wall = float(timing.get("wall_s") or 0.0)
    answer = str(trace.get("answer") or "")
    stop = "max_tokens" if trace.get("truncations") else "stop"
    messages = chat_messages(run=run, history=history, trace=trace)
    scores = _scores(result=result, answer=answer)
    started = result.created_at - timedelta(seconds=wall)
    own_from = converted_count(history)
    events = transcript_events(
        model=run.model, messages=messages, own_from=own_from, scores=scores, target=target, at=started
    )
    sample = EvalSample(
        id=sample_id(result),
        epoch=result.trial + 1,
        input=str(trace.get("request") or ""),
        target=target,
        messages=messages,
        output=ModelOutput.from_content(
            model=run.model, content=answer, stop_reason=stop, error=result.infra_error or None
        ),
        scores=scores,
        events=events,
        metadata={
            **identity_of(result),
            "end_reason": trace.get("end_reason"),
            "infra_error": result.infra_error,
            "opening_messages": "rebuilt" if session else "unavailable (the session is no longer stored)",
            "diagnostics": trace.get("diagnostics"),
            "counts": {k: trace.get(k) for k in _COUNT_KEYS},
            "writes": trace.get("writes") or [],
        },
        model_usage=_usage(run.model, trace.get("usage") or {}),
        completed_at=result.created_at.isoformat(),
        started_at=started.isoformat(),
        total_time=round(wall, 3),
        working_time=round(max(wall - float(timing.get("backoff_s") or 0.0), 0.0), 3),
        # A turn the endpoint failed is Inspect's errored sample (its score is unscored, not a fail).
        error=EvalError(message=f"infrastructure error: {result.infra_error}", traceback="", traceback_ansi="")
        if result.infra_error
        else None,
    )
    # The transcript's repeated inputs pooled, as Inspect's own logs are (read_eval_log resolves them on demand).
    return condense_sample(sample)


_COUNT_KEYS = (
    "n_calls",
    "invalid_calls",
    "tool_faults",
    "unknown_arguments",
    "replay_misses",
    "replay_language_fallbacks",
    "truncations",
    "model_errors",
)


def _scores(*, result: TurnResult, answer: str) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    verdicts = result.verdicts or []
    explanation = f"{result.passed}/{result.scored} rubric items passed; {result.unscored} unscored"
    if result.infra_error:
        explanation = f"not judged: infrastructure error {result.infra_error}"
    unscored = result.score is None or bool(result.infra_error)
    rubric = (
        Score.unscored(reason="scoring_failed", answer=answer, explanation=explanation, metadata={"verdicts": verdicts})
        if unscored
        else Score(value=result.score, answer=answer, explanation=explanation, metadata={"verdicts": verdicts})
    )
    items = {
        f"item{v['idx']}": (("C" if v["passed"] else "I") if v.get("scored") else None)
        for v in sorted(verdicts, key=lambda v: v["idx"])
    }
    reasons = "\n".join(
        f"item{v['idx']}{' (safety)' if v.get('is_safety') else ''}: "
        f"{('pass' if v['passed'] else 'fail') if v.get('scored') else 'unscored'} — {v.get('reason', '')}"
        for v in sorted(verdicts, key=lambda v: v["idx"])
    )
    scores = {"rubric": rubric, "items": Score(value=items, explanation=reasons or explanation)}
    for tau in TAUS:
        name = pass_score_name(tau)
        if unscored:
            scores[name] = Score.unscored(reason="scoring_failed", explanation=explanation)
        else:
            scores[name] = Score(value="C" if result.score >= tau else "I", explanation=f"score {result.score:.3f}")
    return scores


def pass_score_name(tau: float) -> str:
    return f"pass_{tau:.2f}"


def _results(*, results: list[TurnResult], summary: dict[str, Any]) -> Any:
    """Pooled over the run's languages and variants, on the turns with a score (as Pass@Turn counts them);
    PhysReview's own per-language figures (mRS, Pass@Session, ...) under ``physreview``."""
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    scored = [r.score for r in results if r.score is not None and not r.infra_error]
    n = len(scored)

    def metric(name: str, value: float | None) -> EvalMetric:
        return EvalMetric(name=name, value=math.nan if value is None else value)

    scores = [
        EvalScore(
            name="rubric",
            scorer="rubric",
            scored_samples=n,
            unscored_samples=len(results) - n,
            metrics={"mean": metric("mean", sum(scored) / n if n else None)},
        )
    ]
    for tau in TAUS:
        name = pass_score_name(tau)
        share = sum(s >= tau for s in scored) / n if n else None
        scores.append(
            EvalScore(name=name, scorer=name, scored_samples=n, metrics={"accuracy": metric("accuracy", share)})
        )
    paper: dict[str, EvalMetric] = {}
    for lang, m in (summary.get("metrics") or {}).items():
        values = {
            f"mRS_{lang}": (m.get("mRS") or {}).get("all"),
            **{f"pass_at_turn_{t}_{lang}": v for t, v in (m.get("pass_at_turn") or {}).items()},
            **{f"pass_at_session_{t}_{lang}": v for t, v in (m.get("pass_at_session") or {}).items()},
        }
        paper.update({k: metric(k, v) for k, v in values.items()})
    if paper:
        scores.append(EvalScore(name="physreview", scorer="physreview", metrics=paper))
    return EvalResults(total_samples=len(results), completed_samples=n, scores=scores)


def _usage(model: str, usage: dict[str, Any]) -> dict[str, Any]:
    from inspect_ai.model import ModelUsage

    if not usage.get("model_calls"):
        return {}
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return {
        model: ModelUsage(
            input_tokens=prompt,
            output_tokens=completion,
            total_tokens=prompt + completion,
            input_tokens_cache_read=int(usage.get("cached_tokens") or 0) or None,
            reasoning_tokens=int(usage.get("reasoning_tokens") or 0) or None,
            total_cost=usage.get("cost_usd"),
        )
    }


def _usage_total(*, run: EvalRun, results: list[TurnResult]) -> dict[str, Any]:
    total: Any = None
    for result in results:
        for usage in _usage(run.model, (result.trace or {}).get("usage") or {}).values():
            total = usage if total is None else total + usage
    return {run.model: total} if total is not None else {}


def _packages() -> dict[str, str]:
    from importlib.metadata import version

    from core.version import code_version

    return {"inspect_ai": version("inspect_ai"), "physreview": code_version()}
