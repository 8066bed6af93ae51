"""Running, resuming and rejudging evaluation runs.

A run is a list of jobs (session × language × variant × trial); each job plays the session's turns
in order and writes one ``TurnResult`` per finished turn. Jobs run on a thread pool
(``concurrency``), turns within a job never do. Resuming skips the turns that already have a result
(their stored answers rebuild the model's history) and redoes turns that ended with an
infrastructure error. Forked local processes and Celery workers play the same jobs:
:mod:`evaluation.executors`.

This module is the entry point for a whole run (create, execute, rejudge); the parts live by
concept: the options and manifest in :mod:`evaluation.run_manifest`, the jobs and how one is
played in :mod:`evaluation.jobs`, judging and storing one turn in :mod:`evaluation.turn_results`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from django.conf import settings

from evaluation.agents.base import Agent
from evaluation.calibration.certification import run_time_record
from evaluation.dataset import EvalDataset
from evaluation.jobs import expected_turns, job_arguments, jobs, longest_first, play_jobs, run_job
from evaluation.models import EvalRun, EvalStatus
from evaluation.playing import end_status, playing, stop_status
from evaluation.run_manifest import Progress, RunOptions, build_manifest
from evaluation.turn_results import judge_trace, save_turn, unjudged


def create_run(
    *, agent: Agent, judge: Any, dataset: EvalDataset, options: RunOptions, endpoint: dict[str, Any] | None
) -> EvalRun:
    manifest = build_manifest(agent=agent, judge=judge, dataset=dataset, options=options, endpoint=endpoint)
    # Whether the judge was certified when the run was made stays with the run (a later certification
    # or withdrawal does not rewrite it).
    manifest["judge_certification"] = run_time_record(judge=judge.describe())
    return EvalRun.objects.create(
        model=agent.name,
        judge=judge.describe()["name"],
        manifest=manifest,
        judge_certified=manifest["judge_certification"]["certified"],
    )


def execute_run(
    *,
    run: EvalRun,
    agent: Agent,
    judge: Any,
    dataset: EvalDataset,
    options: RunOptions,
    progress: Progress | None = None,
) -> EvalRun:
    """Play every job of the run (skipping finished turns); marks the run finished, partial (turns
    pending) or failed. Raises :class:`~evaluation.playing.RunBusyError` if another process plays it."""
    with playing(run=run):
        return _execute_run(run=run, agent=agent, judge=judge, dataset=dataset, options=options, progress=progress)


def _execute_run(
    *, run: EvalRun, agent: Agent, judge: Any, dataset: EvalDataset, options: RunOptions, progress: Progress | None
) -> EvalRun:
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
    todo = jobs(dataset=dataset, options=options)
    common = job_arguments(run=run, agent=agent, judge=judge, options=options, progress=progress)
    try:
        if options.concurrency <= 1:
            for entry, language, variant, trial in todo:
                run_job(session=entry.load(), language=language, variant=variant, trial=trial, **common)
        else:
            pending, lock, stop = iter(longest_first(todo)), threading.Lock(), threading.Event()

            def take() -> Any:
                with lock:
                    return None if stop.is_set() else next(pending, None)

            try:
                failures = play_jobs(take=take, common=common, threads=min(options.concurrency, len(todo)))
            except BaseException:  # Ctrl-C while waiting: no new jobs; the running ones finish their turn
                stop.set()
                raise
            if failures:
                raise failures[0]
    except BaseException as exc:
        stop_status(run=run, exc=exc)
        raise
    return end_status(run=run, expected=expected_turns(dataset=dataset, options=options))


def rejudge_run(*, source: EvalRun, judge: Any, dataset: EvalDataset, progress: Progress | None = None) -> EvalRun:
    """A new run with ``source``'s stored answers and calls, scored by ``judge``; the model is not called."""
    sessions = {s.session_id: s for s in dataset.sessions}
    manifest = {**source.manifest, "judge": judge.describe(), "rejudge_of": source.pk}
    manifest["judge_certification"] = run_time_record(judge=judge.describe())
    if isinstance(manifest.get("protocol"), dict):  # the new judge's mode, the rest as the source played it
        release = manifest["protocol"].get("name") == "release"
        llm = judge.describe().get("name") != "rules"
        mode = ("release" if release else "physreview") if llm else "rules"
        manifest["protocol"] = {**manifest["protocol"], "judge_mode": mode}
    run = EvalRun.objects.create(
        model=source.model,
        judge=judge.describe()["name"],
        manifest=manifest,
        rejudge_of=source,
        judge_certified=manifest["judge_certification"]["certified"],
    )
    for result in source.turn_results.all().order_by("pk"):
        session = sessions.get(result.session_id)
        turn = next((t for t in session.turns if t.index == result.turn_index), None) if session else None
        if turn is None:
            raise ValueError(f"session {result.session_id} turn {result.turn_index} is not in the dataset")
        key = {"language": result.language, "variant": result.variant, "trial": result.trial}
        if result.infra_error:
            judged = unjudged()
        else:
            judged = judge_trace(judge=judge, session=session, turn=turn, language=result.language, trace=result.trace)
        save_turn(run=run, session=session, turn=turn, key=key, trace=result.trace, judged=judged)
        if progress:
            progress(1)
    # As complete as its source: turns pending there are pending here.
    expected = source.expected_turns if source.expected_turns is not None else source.turn_results.count()
    return end_status(run=run, expected=expected)


def default_output_dir(run: EvalRun) -> Path:
    return Path(settings.VAR_DIR) / "runs" / f"run-{run.pk}"
