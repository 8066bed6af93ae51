"""A run's jobs and how one is played.

A job is one session in one language, variant and trial; its turns are played in order (each
depends on the model's history so far), while jobs are independent and may run on threads
(:func:`play_jobs`), forked processes or Celery workers (:mod:`evaluation.executors`). Resuming
happens here too: a job skips the turns that already have a result, rebuilding the history from
their stored answers, and redoes the turns that ended with an infrastructure error.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError, connection

from core.llm import track_calls
from evaluation.agent import run_turn, session_history
from evaluation.agents.base import Agent
from evaluation.dataset import EvalDataset, EvalSession
from evaluation.models import EvalRun, TurnResult
from evaluation.playing import turn_timing
from evaluation.protocols import DEFAULT_PROTOCOL
from evaluation.protocols.release import release_tools, run_release_turn
from evaluation.protocols.release import session_history as release_history
from evaluation.run_manifest import Progress, RunOptions
from evaluation.tool_runner import ToolRunner
from evaluation.turn_results import judge_trace, save_turn, unjudged

log = logging.getLogger(__name__)


def jobs(*, dataset: EvalDataset, options: RunOptions) -> list[tuple[Any, str, str, int]]:
    """``(session entry, language, variant, trial)``; an entry is loaded (``entry.load()``) only when
    its job is played, so a streamed dataset holds the sessions being played, not all of them."""
    return [
        (entry, language, variant, trial)
        for entry in dataset.entries()
        for language in options.languages
        for variant in options.variants
        for trial in range(options.trials)
    ]


def longest_first(todo: list[tuple[Any, str, str, int]]) -> list[tuple[Any, str, str, int]]:
    """Jobs with the most turns first (stable): a job's turns are sequential, so a long session
    started last would run alone at the end while the other slots sit idle."""
    return sorted(todo, key=lambda job: -job[0].n_turns)


@contextlib.contextmanager
def _asynchronous_commits() -> Any:
    """While a job runs, its commits on PostgreSQL do not wait for the WAL flush
    (``synchronous_commit = off`` for this database session, reset afterwards): a killed runeval
    process loses nothing, and a crash of the database server itself can lose at most the last
    fraction of a second of turns, which a resume simply plays again. Saves a disk flush per turn.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET synchronous_commit")
        except DatabaseError:  # a broken connection is discarded anyway
            log.debug("could not reset synchronous_commit", exc_info=True)


def run_job(
    *,
    run: EvalRun,
    agent: Agent,
    judge: Any,
    session: EvalSession,
    language: str,
    variant: str,
    trial: int,
    max_steps: int,
    progress: Progress | None = None,
    live_patient: bool = False,
    protocol: str = DEFAULT_PROTOCOL,
    literacy: str | None = None,
) -> None:
    """Play one job's turns in order. Under ``release`` the model keeps its whole history (tool calls
    and results too), rebuilt on resume from the stored turns' messages."""
    key = {"language": language, "variant": variant, "trial": trial}
    done = {
        r.turn_index: r
        for r in TurnResult.objects.filter(run=run, session_id=session.session_id, **key).only(
            "turn_index", "trace", "infra_error"
        )
    }
    release = protocol == "release"
    if release:
        history = release_history(session=session, language=language)
        tools = release_tools(session=session, language=language)
        runner = ToolRunner(session=session, language=language, bounds="release", literacy=literacy or "high")
    else:
        history = session_history(session=session, language=language)
        runner = ToolRunner(session=session, language=language, live_patient=live_patient)
    with _asynchronous_commits():
        for turn in session.turns:
            previous = done.get(turn.index)
            if previous is not None and not previous.infra_error:
                history += played_history(previous.trace, release=release)
                if release:  # replay by order: the finished turn's patient calls were served
                    for call in previous.trace.get("patient_replies") or []:
                        runner.skip_patient_reply(tool=str(call.get("tool")))
                if progress:
                    progress(1)
                continue
            played = {
                "agent": agent,
                "session": session,
                "turn": turn,
                "history": history,
                "runner": runner,
                "language": language,
                "variant": variant,
                "trial": trial,
                "max_steps": max_steps,
            }
            with track_calls() as calls:  # the turn's model calls, failed ones and backoff too
                outcome = run_release_turn(**played, tools=tools) if release else run_turn(**played)
            trace = {**outcome.trace, "infra_error": outcome.infra_error, "timing": turn_timing(outcome.trace, calls)}
            if outcome.infra_error:
                judged = unjudged()
            else:
                judged = judge_trace(judge=judge, session=session, turn=turn, language=language, trace=trace)
            save_turn(
                run=run, session=session, turn=turn, key=key, trace=trace, judged=judged, replace=previous is not None
            )
            if progress:
                progress(1)
            if outcome.infra_error:
                # The rest of the session depends on this answer: leave it for --resume (pending turns,
                # not shown as played).
                return
            history += played_history(trace, release=release)


def played_history(trace: dict[str, Any], *, release: bool) -> list[dict[str, Any]]:
    """What a finished turn adds to the model's history: its request and answer, or (release) all of
    its messages."""
    if release and trace.get("messages"):
        return list(trace["messages"])
    return [
        {"role": "user", "content": trace.get("request", "")},
        {"role": "assistant", "content": trace.get("answer", "")},
    ]


def play_jobs(*, take: Callable[[], Any], common: dict[str, Any], threads: int) -> list[Exception]:
    """``threads`` threads take jobs until ``take()`` returns None; returns the jobs' exceptions.

    A thread keeps its database connection from job to job and closes it when it ends: closing it
    after every job (as a pool of one-off tasks would) makes PostgreSQL start a new backend, with
    cold caches, for every session.
    """
    failures: list[Exception] = []

    def worker() -> None:
        try:
            while (job := take()) is not None:
                entry, language, variant, trial = job
                try:
                    run_job(session=entry.load(), language=language, variant=variant, trial=trial, **common)
                except Exception as exc:  # the other jobs still run; the run fails at the end
                    log.exception("runeval job %s/%s failed", entry.session_id, language)
                    failures.append(exc)
        finally:
            connection.close()

    pool = [threading.Thread(target=worker, name=f"runeval-{i}", daemon=True) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return failures


def job_arguments(
    *, run: EvalRun, agent: Agent, judge: Any, options: RunOptions, progress: Progress | None
) -> dict[str, Any]:
    """The arguments of :func:`run_job` that every job of the run shares."""
    return {
        "run": run,
        "agent": agent,
        "judge": judge,
        "max_steps": options.max_steps,
        "progress": progress,
        "live_patient": options.live_patient,
        "protocol": options.protocol,
        "literacy": options.literacy,
    }


def expected_turns(*, dataset: EvalDataset, options: RunOptions) -> int:
    """Turns a run of ``dataset`` under ``options`` plays in all."""
    return sum(entry.n_turns for entry, _lang, _variant, _trial in jobs(dataset=dataset, options=options))
