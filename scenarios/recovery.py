"""Generation runs that stopped: a ``running`` run nobody refreshes any more (the ``generate`` command was killed,
or a slot's task was lost with the worker) is finished, resumed or failed without a person.

A run's heartbeat is refreshed by the command while it waits and by every slot task (:mod:`scenarios.tasks`),
so it goes stale only when nothing works on it. Then :func:`recover_stale` (the Celery worker's sweep, the
``generate`` command at start) either finishes it (every slot done: counts and status, as the command would
have), or dispatches its missing slots again (idempotent, so no duplicate session), or, after
``JOB_MAX_AUTO_RESUMES`` such resumes, marks it ``failed`` with the slots it still lacked.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from core import jobs
from scenarios import services
from scenarios.models import Backend, GenerationRun, RunStatus
from scenarios.tasks import generate_session_task

logger = logging.getLogger(__name__)


def _plural(count: int, noun: str) -> str:
    """``noun`` for one, ``noun + "s"`` otherwise (no "(s)" in messages people read)."""
    return noun if count == 1 else f"{noun}s"


def stale_runs():
    cutoff = jobs.stale_cutoff()
    never_beat = Q(heartbeat_at__isnull=True, created_at__lt=cutoff)
    generated = GenerationRun.objects.exclude(backend=Backend.IMPORT)  # an import is one transaction: never stale
    return generated.filter(Q(heartbeat_at__lt=cutoff) | never_beat, status=RunStatus.RUNNING)


def finish(*, run_id: int) -> GenerationRun:
    """Every slot is done: store the counts and the final status (``interrupted`` if slots failed on the LLM
    endpoint, which a resume retries), as the command does at its end."""
    run = services.refresh_run_counts(run_id=run_id, finished=True)
    if any(e.get("reason") == services.LLM_ERROR for e in run.errors):
        services.mark_run(run_id=run_id, status=RunStatus.INTERRUPTED)
        run.refresh_from_db()
    return run


def dispatch_missing(*, run: GenerationRun) -> list[int]:
    """Queue the slots without a session or recorded failure (in-process without a broker)."""
    slots = [s.index for s in services.missing_slots(run=run)]
    for index in slots:
        generate_session_task.delay(run.pk, index)
    return slots


def short_slots(indexes: list[int]) -> str:
    return ", ".join(map(str, indexes[:20])) + (f" … ({len(indexes)} in all)" if len(indexes) > 20 else "")


def recover_stale() -> list[str]:
    """Finish, resume or fail each stale run; each takeover is a compare-and-set on its heartbeat. Returns what
    was done, in words."""
    done = []
    for run in stale_runs():
        try:
            line = _recover(run)
        except Exception:  # one run that cannot be recovered must not keep the others stuck
            logger.exception("run %s: recovery failed", run.pk)
            continue
        if line:
            logger.warning(line)
            done.append(line)
    return done


def _recover(run: GenerationRun) -> str | None:
    seen = GenerationRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING, heartbeat_at=run.heartbeat_at)
    if not seen.update(heartbeat_at=timezone.now()):
        return None  # another sweep or the command got there first
    missing = [s.index for s in services.missing_slots(run=run)]
    silent = "never started" if run.heartbeat_at is None else f"no heartbeat since {run.heartbeat_at:%H:%M:%S}"
    if not missing:
        run = finish(run_id=run.pk)
        return f"run {run.pk} finished ({silent}; every slot was done): {run.status}"
    if run.resumes >= settings.JOB_MAX_AUTO_RESUMES:
        reason = (
            f"stopped: {silent}, after {run.resumes} automatic {_plural(run.resumes, 'resume')}; "
            f"{_plural(len(missing), 'slot')} {short_slots(missing)} still missing; is a Celery worker running? "
            f"Resume with `manage.py generate --resume {run.pk}`"
        )
        services.refresh_run_counts(run_id=run.pk, finished=False)
        GenerationRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, stop_reason=reason)
        return f"run {run.pk} failed ({reason})"
    GenerationRun.objects.filter(pk=run.pk).update(resumes=F("resumes") + 1)
    line = f"run {run.pk} resumed ({silent}): {_plural(len(missing), 'slot')} {short_slots(missing)} dispatched again"
    dispatch_missing(run=run)
    if generate_session_task.app.conf.task_always_eager and not services.missing_slots(run=run):
        finish(run_id=run.pk)
    return line


def resume(*, run: GenerationRun) -> list[int]:
    """A person's resume (admin): a failed, interrupted or stale run is running again with its automatic-resume
    count reset, its LLM-endpoint failures reopened and its missing slots queued. Without a broker the slots
    run here and the run is finished on return."""
    services.reopen_llm_errors(run_id=run.pk)
    GenerationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, resumes=0, stop_reason="", heartbeat_at=timezone.now(), finished_at=None
    )
    run.refresh_from_db()
    slots = dispatch_missing(run=run)
    if generate_session_task.app.conf.task_always_eager:
        finish(run_id=run.pk)
    return slots
