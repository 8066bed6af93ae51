"""Running, resuming and rejudging evaluation runs.

A run is a list of jobs (session × language × variant × trial); each job plays the session's turns
in order and writes one ``TurnResult`` per finished turn. Jobs run on a thread pool
(``concurrency``), turns within a job never do. Resuming skips the turns that already have a result
(their stored answers rebuild the model's history) and redoes turns that ended with an
infrastructure error. Forked local processes and Celery workers play the same jobs:
:mod:`evaluation.executors`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import platform
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import django
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction

from core.llm import track_calls
from core.version import code_version
from ehr.fhir import schema_hash
from evaluation.agent import DEFAULT_MAX_STEPS, ToolRunner, run_turn, session_history
from evaluation.agents.base import Agent
from evaluation.dataset import EvalDataset, EvalSession
from evaluation.models import EvalRun, EvalStatus, TurnResult
from evaluation.playing import RunConflictError, end_status, playing, stop_status, turn_timing
from evaluation.protocols import DEFAULT_PROTOCOL
from evaluation.protocols import settings as protocol_settings
from evaluation.protocols.release import PROMPT_HASH as RELEASE_PROMPT_HASH
from evaluation.protocols.release import release_tools, run_release_turn
from evaluation.protocols.release import session_history as release_history

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
    # runeval --protocol: physreview (PhysReview's conditions) or release (the released runner's).
    protocol: str = DEFAULT_PROTOCOL
    literacy: str | None = None  # release: the patient's health-literacy variant replayed
    max_tokens: int | None = None  # output budget of the model under test; None: endpoint/role default


def protocol_manifest(*, judge: Any, options: RunOptions) -> dict[str, Any]:
    """``manifest["protocol"]``: the protocol and every setting it fixes (see :mod:`evaluation.protocols`)."""
    describe = judge.describe()
    judge_kind = "rules" if describe.get("name") == "rules" else "llm"
    out = protocol_settings(
        protocol=options.protocol,
        literacy=options.literacy,
        max_steps=options.max_steps,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        live_patient=options.live_patient,
        judge_kind=judge_kind,
    ).as_dict()
    if options.protocol == "release":
        out["prompt_hash"] = RELEASE_PROMPT_HASH
    return out


def _session_schema_hash(*, dataset: EvalDataset, language: str) -> str:
    """Under ``release`` each session brings its own schemas: SHA-256 of the distinct sets offered."""
    offered = sorted(
        {
            json.dumps(release_tools(session=s, language=language), sort_keys=True, ensure_ascii=False)
            for s in dataset.sessions
        }
    )
    return hashlib.sha256("\n".join(offered).encode("utf-8")).hexdigest()


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
        "protocol": protocol_manifest(judge=judge, options=options),
        "tool_schema_hash": {
            lang: _session_schema_hash(dataset=dataset, language=lang)
            if options.protocol == "release"
            else schema_hash(language=lang)
            for lang in options.languages
        },
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
    """Verdicts as dicts plus counts; a judge failure leaves the turn unscored with the error recorded.
    ``usage``: the judge's model calls for this turn (tokens, cost), ``None`` for a judge without any."""
    with track_calls() as calls:
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
        "usage": calls.as_dict() if calls.results or calls.failures else None,
    }


def unjudged() -> dict[str, Any]:
    """What :func:`judge_trace` returns for a turn that was not judged (it ended on an infrastructure error)."""
    return {"verdicts": [], "passed": 0, "scored": 0, "unscored": 0, "score": None, "judge_error": ""}


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
    or the DELETE of an earlier try and the INSERT together. A turn another process stored meanwhile
    raises :class:`~evaluation.playing.RunConflictError` (the run is being played twice)."""
    trace = {**trace, "judge_error": judged["judge_error"]} if judged["judge_error"] else trace
    trace = {k: v for k, v in trace.items() if k != "judge_usage"}
    if judged.get("usage"):
        trace["judge_usage"] = judged["usage"]
    try:
        _insert(run=run, session=session, turn=turn, key=key, trace=trace, judged=judged, replace=replace)
    except IntegrityError:
        raise RunConflictError(
            f"session {session.session_id} turn {turn.index} ({key['language']}, {key['variant']}, trial "
            f"{key['trial']}) of run {run.pk} was stored by another process meanwhile: is the run played twice?"
        ) from None


def _insert(
    *, run: EvalRun, session: EvalSession, turn: Any, key: dict[str, Any], trace: dict, judged: dict, replace: bool
) -> None:
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
                history += _played(previous.trace, release=release)
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
            _save(
                run=run, session=session, turn=turn, key=key, trace=trace, judged=judged, replace=previous is not None
            )
            if progress:
                progress(1)
            if outcome.infra_error:
                # The rest of the session depends on this answer: leave it for --resume (pending turns,
                # not shown as played).
                return
            history += _played(trace, release=release)


def _played(trace: dict[str, Any], *, release: bool) -> list[dict[str, Any]]:
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
    """Play every job of the run (skipping finished turns); marks the run finished, partial (turns
    pending) or failed. Raises :class:`~evaluation.playing.RunBusyError` if another process plays it."""
    with playing(run=run):
        return _execute_run(run=run, agent=agent, judge=judge, dataset=dataset, options=options, progress=progress)


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
    return sum(len(session.turns) for session, _lang, _variant, _trial in jobs(dataset=dataset, options=options))


def _execute_run(
    *, run: EvalRun, agent: Agent, judge: Any, dataset: EvalDataset, options: RunOptions, progress: Progress | None
) -> EvalRun:
    EvalRun.objects.filter(pk=run.pk).update(status=EvalStatus.RUNNING, finished_at=None)
    todo = jobs(dataset=dataset, options=options)
    common = job_arguments(run=run, agent=agent, judge=judge, options=options, progress=progress)
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
    if isinstance(manifest.get("protocol"), dict):  # the new judge's mode, the rest as the source played it
        release = manifest["protocol"].get("name") == "release"
        llm = judge.describe().get("name") != "rules"
        mode = ("release" if release else "physreview") if llm else "rules"
        manifest["protocol"] = {**manifest["protocol"], "judge_mode": mode}
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
            judged = unjudged()
        else:
            judged = judge_trace(judge=judge, session=session, turn=turn, language=result.language, trace=result.trace)
        _save(run=run, session=session, turn=turn, key=key, trace=result.trace, judged=judged)
        if progress:
            progress(1)
    # As complete as its source: turns pending there are pending here.
    expected = source.expected_turns if source.expected_turns is not None else source.turn_results.count()
    return end_status(run=run, expected=expected)


def default_output_dir(run: EvalRun) -> Path:
    return Path(settings.VAR_DIR) / "runs" / f"run-{run.pk}"
