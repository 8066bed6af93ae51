"""Playing a run in forked local processes (``runeval --processes``) or on Celery workers
(``runeval --workers celery``).

Both hand out the same jobs as :func:`evaluation.services.execute_run` and play each with
:func:`~evaluation.jobs.run_job`, so the stored turns, the run's status and ``--resume`` are
the same as after a threaded run.
"""

from __future__ import annotations

import copy
import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from typing import Any

from django.db import connection, connections

from core.llm import LLMClient
from evaluation.agents.base import Agent
from evaluation.dataset import EvalDataset
from evaluation.jobs import expected_turns, job_arguments, jobs, longest_first, play_jobs
from evaluation.models import EvalRun, EvalStatus, TurnResult
from evaluation.playing import die_with_parent, end_status, playing, stop_status
from evaluation.run_manifest import Progress, RunOptions
from evaluation.services import execute_run

log = logging.getLogger(__name__)


def _stored_progress(*, run: EvalRun, progress: Progress | None, shown: int) -> int:
    """Report the turns stored since ``shown`` (other processes store them); returns the new count."""
    stored = TurnResult.objects.filter(run=run).count()
    if progress and stored > shown:
        progress(stored - shown)
        return stored
    return shown


def _for_this_process(part: Any) -> Any:
    """An agent or judge usable in a forked process: one with an LLM client gets its own client (the
    parent's HTTP connection pool must not be shared across processes); rules ones are stateless."""
    client = getattr(part, "client", None)
    if not isinstance(client, LLMClient):
        return part
    clone = copy.copy(part)
    clone.client = LLMClient(
        config=client.config, prices=client.prices, accumulator=client.accumulator, data_use=client.data_use
    )
    clone.client.server_fingerprint = client.server_fingerprint
    return clone


def _process_main(*, take: Callable[[], Any], common: dict[str, Any], threads: int) -> int:
    """Body of one worker process: ``threads`` threads take jobs from the shared counter until none is left."""
    common = {**common, "agent": _for_this_process(common["agent"]), "judge": _for_this_process(common["judge"])}
    failures = play_jobs(take=take, common=common, threads=threads)
    for part in (common["agent"], common["judge"]):
        client = getattr(part, "client", None)
        if isinstance(client, LLMClient):
            client.close()
    return 1 if failures else 0


THREADS_PER_PROCESS = 8


def auto_processes(*, concurrency: int, cpu_count: int | None = None, database: Any = None) -> int:
    """``runeval --processes auto``: one local process per core, each with at least
    :data:`THREADS_PER_PROCESS` of the ``concurrency`` threads (a thread mostly waits on the model, so
    fewer gain little from a process of their own). One process on SQLite (its single writer would
    make forked processes queue on the file lock) and inside an open transaction, which forked
    processes could not see (tests).
    """
    database = connection if database is None else database
    if database.vendor != "postgresql" or database.in_atomic_block:
        return 1
    cores = (os.cpu_count() or 1) if cpu_count is None else cpu_count
    return max(1, min(cores, concurrency // THREADS_PER_PROCESS))


def execute_run_in_processes(
    *,
    run: EvalRun,
    agent: Agent,
    judge: Any,
    dataset: EvalDataset,
    options: RunOptions,
    processes: int,
    progress: Progress | None = None,
    poll_s: float = 0.2,
) -> EvalRun:
    """Like :func:`~evaluation.services.execute_run`, with the jobs spread over ``processes`` forked local processes.

    One process's threads share one interpreter lock; the model client's per-call work, the live EHR
    tools and the result writes then queue for it. Forked processes (``options.concurrency`` threads
    in all, split evenly) each have their own. Jobs are handed out longest first from a shared counter,
    each job is still played by one thread with its turns in order, and every finished turn is stored
    in its own transaction, so ``--resume`` behaves exactly as after a threaded run.
    """
    if processes <= 1:
        return execute_run(run=run, agent=agent, judge=judge, dataset=dataset, options=options, progress=progress)
    if connection.in_atomic_block:
        raise RuntimeError("worker processes cannot see data of an open transaction; run outside a transaction")
    with playing(run=run):
        todo = longest_first(jobs(dataset=dataset, options=options))
        processes = min(processes, max(len(todo), 1))
        threads = max(1, -(-options.concurrency // processes))
        context = multiprocessing.get_context("fork")
        counter = context.Value("i", 0)

        def take() -> Any:
            with counter.get_lock():
                index = counter.value
                counter.value += 1
            return todo[index] if index < len(todo) else None

        common = job_arguments(run=run, agent=agent, judge=judge, options=options, progress=None)
        EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
        shown = TurnResult.objects.filter(run=run).count()
        connections.close_all()  # a forked child must open its own database connections
        children = []
        try:
            for _ in range(processes):
                child = context.Process(target=_child, args=(take, common, threads, os.getpid()), daemon=True)
                child.start()
                children.append(child)
            while True:
                for child in children:
                    child.join(timeout=poll_s / len(children))
                shown = _stored_progress(run=run, progress=progress, shown=shown)
                if not any(child.is_alive() for child in children):
                    break
            failed = [c for c in children if c.exitcode != 0]
            if failed:
                codes = ", ".join(str(c.exitcode) for c in failed)
                raise RuntimeError(f"{len(failed)} of {len(children)} runeval process(es) failed (exit codes {codes})")
        except BaseException as exc:
            for child in children:
                if child.is_alive():
                    child.terminate()
            for child in children:
                child.join(timeout=10)
            stop_status(run=run, exc=exc)
            raise
        return end_status(run=run, expected=expected_turns(dataset=dataset, options=options))


def _child(take: Callable[[], Any], common: dict[str, Any], threads: int, parent_pid: int) -> None:
    code = 1
    try:
        die_with_parent(parent_pid=parent_pid)  # a killed runeval leaves no orphan still playing the run
        code = _process_main(take=take, common=common, threads=threads)
    except BaseException:
        log.exception("runeval worker process failed")
    finally:
        # Skip the parent's atexit handlers and buffered state copied by fork.
        os._exit(code)


def execute_run_on_workers(
    *, run: EvalRun, dataset: EvalDataset, options: RunOptions, progress: Progress | None = None, poll_s: float = 0.5
) -> EvalRun:
    """Dispatch one Celery task per job and wait for all of them (without a broker they run in-process).

    Progress is the number of stored turns; a failed task marks the run failed (its finished turns stay,
    so ``--resume`` completes it).
    """
    from evaluation.tasks import run_eval_job_task

    with playing(run=run):
        EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
        results = [
            run_eval_job_task.delay(run.pk, session.session_id, language, variant, trial)
            for session, language, variant, trial in jobs(dataset=dataset, options=options)
        ]
        shown = 0
        try:
            while True:
                pending = [r for r in results if not r.ready()]
                shown = _stored_progress(run=run, progress=progress, shown=shown)
                if not pending:
                    break
                time.sleep(poll_s)
            failed = [r for r in results if r.failed()]
            if failed:
                raise RuntimeError(f"{len(failed)} job(s) failed on the workers, e.g.: {failed[0].result!r}")
        except BaseException as exc:
            stop_status(run=run, exc=exc)
            raise
        return end_status(run=run, expected=expected_turns(dataset=dataset, options=options))
