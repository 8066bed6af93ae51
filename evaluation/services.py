"""Running, resuming and rejudging evaluation runs.

A run is a list of jobs (session × language × variant × trial); each job plays the session's turns
in order and writes one ``TurnResult`` per finished turn. Jobs run on a thread pool
(``concurrency``), turns within a job never do. Resuming skips the turns that already have a result
(their stored answers rebuild the model's history) and redoes turns that ended with an
infrastructure error.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import multiprocessing
import os
import platform
import subprocess
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import django
from django.conf import settings
from django.db import DatabaseError, connection, connections, transaction
from django.utils import timezone

from ehr.fhir import schema_hash
from evaluation.agent import DEFAULT_MAX_STEPS, ToolRunner, run_turn, session_history
from evaluation.agents.base import Agent
from evaluation.dataset import EvalDataset, EvalSession
from evaluation.models import EvalRun, EvalStatus, TurnResult
from physreview.llm import LLMClient

log = logging.getLogger(__name__)
Progress = Callable[[int], None]


@dataclass(frozen=True)
class RunOptions:
    languages: tuple[str, ...] = ("en",)
    variants: tuple[str, ...] = ("implicit",)
    trials: int = 1
    max_steps: int = DEFAULT_MAX_STEPS
    concurrency: int = 1
    temperature: float | None = None
    reasoning_effort: str | None = None
    limit: int | None = None
    live_patient: bool = False  # patient tools answered by the record-grounded rules patient, not replay
    processes: int = 1  # local worker processes the run started with (how it ran; scores do not depend on it)


def code_version() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_manifest(
    *, agent: Agent, judge: Any, dataset: EvalDataset, options: RunOptions, endpoint: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "model": agent.name,
        "agent": agent.describe(),
        "endpoint": endpoint,
        "parameters": asdict(options),
        "dataset": {
            "source": dataset.source,
            "label": dataset.label,
            "snapshot_id": dataset.snapshot_id,
            "checksum": dataset.checksum,
            "n_sessions": len(dataset.sessions),
            "session_ids": [s.session_id for s in dataset.sessions],
        },
        "tool_schema_hash": {lang: schema_hash(language=lang) for lang in options.languages},
        "judge": judge.describe(),
        "code_version": code_version(),
        "python": platform.python_version(),
        "django": django.get_version(),
    }


def create_run(
    *, agent: Agent, judge: Any, dataset: EvalDataset, options: RunOptions, endpoint: dict[str, Any] | None
) -> EvalRun:
    manifest = build_manifest(agent=agent, judge=judge, dataset=dataset, options=options, endpoint=endpoint)
    return EvalRun.objects.create(model=agent.name, judge=judge.describe()["name"], manifest=manifest)


def jobs(*, dataset: EvalDataset, options: RunOptions) -> list[tuple[EvalSession, str, str, int]]:
    return [
        (session, language, variant, trial)
        for session in dataset.sessions
        for language in options.languages
        for variant in options.variants
        for trial in range(options.trials)
    ]


def longest_first(todo: list[tuple[EvalSession, str, str, int]]) -> list[tuple[EvalSession, str, str, int]]:
    """Jobs with the most turns first (stable): a job's turns are sequential, so a long session
    started last would run alone at the end while the other slots sit idle."""
    return sorted(todo, key=lambda job: -len(job[0].turns))


def score_of(verdicts: list[dict[str, Any]]) -> tuple[int, int, int, float | None]:
    scored = [v for v in verdicts if v["scored"]]
    passed = sum(bool(v["passed"]) for v in scored)
    return passed, len(scored), len(verdicts) - len(scored), (passed / len(scored) if scored else None)


def judge_trace(*, judge: Any, session: EvalSession, turn: Any, language: str, trace: dict[str, Any]) -> dict:
    """Verdicts as dicts plus counts; a judge failure leaves the turn unscored with the error recorded."""
    try:
        verdicts = [v.as_dict() for v in judge.judge(session=session, turn=turn, language=language, trace=trace)]
        error = ""
    except Exception as exc:  # an LLM judge that keeps failing must not stop the run
        log.warning("judge failed on %s/%s: %s", session.session_id, turn.index, exc)
        verdicts, error = [], f"{type(exc).__name__}: {exc}"
    passed, scored, unscored, score = score_of(verdicts)
    if error:
        unscored = len(turn.rubric)
    return {
        "verdicts": verdicts,
        "passed": passed,
        "scored": scored,
        "unscored": unscored,
        "score": score,
        "judge_error": error,
    }


def _save(
    *,
    run: EvalRun,
    session: EvalSession,
    turn: Any,
    key: dict[str, Any],
    trace: dict,
    judged: dict,
    replace: bool = True,
) -> None:
    """Store one finished turn in its own transaction (what --resume relies on): a single INSERT,
    or the DELETE of an earlier try and the INSERT together."""
    trace = {**trace, "judge_error": judged["judge_error"]} if judged["judge_error"] else trace
    with transaction.atomic() if replace else contextlib.nullcontext():
        if replace:
            TurnResult.objects.filter(run=run, session_id=session.session_id, turn_index=turn.index, **key).delete()
        TurnResult.objects.create(
            run=run,
            session_id=session.session_id,
            turn_index=turn.index,
            scenario=session.scenario,
            tier=session.tier,
            task_type=turn.task_type,
            subtype=turn.subtype,
            tool_source=turn.tool_source,
            passed=judged["passed"],
            scored=judged["scored"],
            unscored=judged["unscored"],
            score=judged["score"],
            infra_error=trace.get("infra_error", ""),
            trace=trace,
            verdicts=judged["verdicts"],
            **key,
        )


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
) -> None:
    key = {"language": language, "variant": variant, "trial": trial}
    done = {
        r.turn_index: r
        for r in TurnResult.objects.filter(run=run, session_id=session.session_id, **key).only(
            "turn_index", "trace", "infra_error"
        )
    }
    history = session_history(session=session, language=language)
    runner = ToolRunner(session=session, language=language, live_patient=live_patient)
    with _asynchronous_commits():
        for turn in session.turns:
            previous = done.get(turn.index)
            if previous is not None and not previous.infra_error:
                history += [
                    {"role": "user", "content": previous.trace.get("request", "")},
                    {"role": "assistant", "content": previous.trace.get("answer", "")},
                ]
                if progress:
                    progress(1)
                continue
            outcome = run_turn(
                agent=agent,
                session=session,
                turn=turn,
                history=history,
                runner=runner,
                language=language,
                variant=variant,
                trial=trial,
                max_steps=max_steps,
            )
            trace = {**outcome.trace, "infra_error": outcome.infra_error}
            if outcome.infra_error:
                judged = {"verdicts": [], "passed": 0, "scored": 0, "unscored": 0, "score": None, "judge_error": ""}
            else:
                judged = judge_trace(judge=judge, session=session, turn=turn, language=language, trace=trace)
            _save(
                run=run, session=session, turn=turn, key=key, trace=trace, judged=judged, replace=previous is not None
            )
            if progress:
                progress(1)
            if outcome.infra_error:
                # The rest of the session depends on this answer: leave it for --resume.
                if progress:
                    progress(len(session.turns) - turn.index - 1)
                return
            history += [{"role": "user", "content": trace["request"]}, {"role": "assistant", "content": outcome.answer}]


def _play_jobs(*, take: Callable[[], Any], common: dict[str, Any], threads: int) -> list[Exception]:
    """``threads`` threads take jobs until ``take()`` returns None; returns the jobs' exceptions.

    A thread keeps its database connection from job to job and closes it when it ends: closing it
    after every job (as a pool of one-off tasks would) makes PostgreSQL start a new backend, with
    cold caches, for every session.
    """
    failures: list[Exception] = []

    def worker() -> None:
        try:
            while (job := take()) is not None:
                session, language, variant, trial = job
                try:
                    run_job(session=session, language=language, variant=variant, trial=trial, **common)
                except Exception as exc:  # the other jobs still run; the run fails at the end
                    log.exception("runeval job %s/%s failed", session.session_id, language)
                    failures.append(exc)
        finally:
            connection.close()

    pool = [threading.Thread(target=worker, name=f"runeval-{i}", daemon=True) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return failures


def execute_run(
    *,
    run: EvalRun,
    agent: Agent,
    judge: Any,
    dataset: EvalDataset,
    options: RunOptions,
    progress: Progress | None = None,
) -> EvalRun:
    """Play every job of the run (skipping finished turns); marks the run finished or failed."""
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
    todo = jobs(dataset=dataset, options=options)
    common = {
        "run": run,
        "agent": agent,
        "judge": judge,
        "max_steps": options.max_steps,
        "progress": progress,
        "live_patient": options.live_patient,
    }
    try:
        if options.concurrency <= 1:
            for session, language, variant, trial in todo:
                run_job(session=session, language=language, variant=variant, trial=trial, **common)
        else:
            pending, lock, stop = iter(longest_first(todo)), threading.Lock(), threading.Event()

            def take() -> Any:
                with lock:
                    return None if stop.is_set() else next(pending, None)

            try:
                failures = _play_jobs(take=take, common=common, threads=min(options.concurrency, len(todo)))
            except BaseException:  # Ctrl-C while waiting: no new jobs; the running ones finish their turn
                stop.set()
                raise
            if failures:
                raise failures[0]
    except BaseException as exc:
        status = EvalStatus.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EvalStatus.FAILED
        EvalRun.objects.filter(pk=run.pk).update(status=status, error=f"{type(exc).__name__}: {exc}")
        raise
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.FINISHED, finished_at=timezone.now(), error="")
    run.refresh_from_db()
    return run


def _for_this_process(part: Any) -> Any:
    """An agent or judge usable in a forked process: one with an LLM client gets its own client (the
    parent's HTTP connection pool must not be shared across processes); rules ones are stateless."""
    client = getattr(part, "client", None)
    if not isinstance(client, LLMClient):
        return part
    clone = copy.copy(part)
    clone.client = LLMClient(config=client.config, prices=client.prices, accumulator=client.accumulator)
    return clone


def _process_main(*, take: Callable[[], Any], common: dict[str, Any], threads: int) -> int:
    """Body of one worker process: ``threads`` threads take jobs from the shared counter until none is left."""
    common = {**common, "agent": _for_this_process(common["agent"]), "judge": _for_this_process(common["judge"])}
    failures = _play_jobs(take=take, common=common, threads=threads)
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
    """Like :func:`execute_run`, with the jobs spread over ``processes`` forked local processes.

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

    common = {
        "run": run,
        "agent": agent,
        "judge": judge,
        "max_steps": options.max_steps,
        "progress": None,
        "live_patient": options.live_patient,
    }
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
    shown = TurnResult.objects.filter(run=run).count()
    connections.close_all()  # a forked child must open its own database connections
    children = []
    try:
        for _ in range(processes):
            child = context.Process(target=_child, args=(take, common, threads), daemon=True)
            child.start()
            children.append(child)
        while True:
            for child in children:
                child.join(timeout=poll_s / len(children))
            stored = TurnResult.objects.filter(run=run).count()
            if progress and stored > shown:
                progress(stored - shown)
                shown = stored
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
        status = EvalStatus.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EvalStatus.FAILED
        EvalRun.objects.filter(pk=run.pk).update(status=status, error=f"{type(exc).__name__}: {exc}")
        raise
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.FINISHED, finished_at=timezone.now(), error="")
    run.refresh_from_db()
    return run


def _child(take: Callable[[], Any], common: dict[str, Any], threads: int) -> None:
    code = 1
    try:
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
    import time

    from evaluation.tasks import run_eval_job_task

    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
    results = [
        run_eval_job_task.delay(run.pk, session.session_id, language, variant, trial)
        for session, language, variant, trial in jobs(dataset=dataset, options=options)
    ]
    shown = 0
    try:
        while True:
            pending = [r for r in results if not r.ready()]
            stored = TurnResult.objects.filter(run=run).count()
            if progress and stored > shown:
                progress(stored - shown)
                shown = stored
            if not pending:
                break
            time.sleep(poll_s)
        failed = [r for r in results if r.failed()]
        if failed:
            raise RuntimeError(f"{len(failed)} job(s) failed on the workers, e.g.: {failed[0].result!r}")
    except BaseException as exc:
        status = EvalStatus.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EvalStatus.FAILED
        EvalRun.objects.filter(pk=run.pk).update(status=status, error=f"{type(exc).__name__}: {exc}")
        raise
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.FINISHED, finished_at=timezone.now(), error="")
    run.refresh_from_db()
    return run


def rejudge_run(*, source: EvalRun, judge: Any, dataset: EvalDataset, progress: Progress | None = None) -> EvalRun:
    """A new run with ``source``'s stored answers and calls, scored by ``judge``; the model is not called."""
    sessions = {s.session_id: s for s in dataset.sessions}
    manifest = {**source.manifest, "judge": judge.describe(), "rejudge_of": source.pk}
    run = EvalRun.objects.create(
        model=source.model, judge=judge.describe()["name"], manifest=manifest, rejudge_of=source
    )
    for result in source.turn_results.all().order_by("pk"):
        session = sessions.get(result.session_id)
        turn = next((t for t in session.turns if t.index == result.turn_index), None) if session else None
        if turn is None:
            raise ValueError(f"session {result.session_id} turn {result.turn_index} is not in the dataset")
        key = {"language": result.language, "variant": result.variant, "trial": result.trial}
        if result.infra_error:
            judged = {"verdicts": [], "passed": 0, "scored": 0, "unscored": 0, "score": None, "judge_error": ""}
        else:
            judged = judge_trace(judge=judge, session=session, turn=turn, language=result.language, trace=result.trace)
        _save(run=run, session=session, turn=turn, key=key, trace=result.trace, judged=judged)
        if progress:
            progress(1)
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.FINISHED, finished_at=timezone.now())
    run.refresh_from_db()
    return run


def default_output_dir(run: EvalRun) -> Path:
    return Path(settings.VAR_DIR) / "runs" / f"run-{run.pk}"
