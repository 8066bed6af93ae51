"""Celery task of ``runeval --workers celery``: one job (session × language × variant × trial) per task.

A worker rebuilds the run's agent, judge and dataset from the stored manifest (the API key comes from
the worker's own environment, under the variable name the manifest records) and plays the job with
the same service as a local run, so finished turns are skipped exactly as on ``--resume``.
"""

from __future__ import annotations

import threading
from typing import Any

from celery import shared_task

from evaluation.jobs import run_job
from evaluation.models import EvalRun

_parts: dict[tuple[int, str], Any] = {}
_lock = threading.Lock()


def _parts_for(run: EvalRun) -> Any:
    from evaluation.endpoints import restore_endpoints
    from evaluation.setup import parts_for_run

    key = (run.pk, run.started_at.isoformat())
    with _lock:
        if key not in _parts:
            if len(_parts) >= 4:
                _parts.pop(next(iter(_parts)))
            _parts[key] = parts_for_run(run, concurrency=1)
            agent, judge, _dataset, _options = _parts[key]
            restore_endpoints(run=run, agent=agent, judge=judge)  # cache switch, server fingerprint, judge budget
        return _parts[key]


@shared_task(acks_late=True)
def run_eval_job_task(run_id: int, session_id: str, language: str, variant: str, trial: int) -> dict:
    """Idempotent: keyed by (run, session, language, variant, trial); finished turns are not replayed."""
    run = EvalRun.objects.get(pk=run_id)
    agent, judge, dataset, options = _parts_for(run)
    entry = next((e for e in dataset.entries() if e.session_id == session_id), None)
    session = None if entry is None else entry.load()
    if session is None:
        raise ValueError(f"session {session_id} is not part of run {run_id}")
    run_job(
        run=run,
        agent=agent,
        judge=judge,
        session=session,
        language=language,
        variant=variant,
        trial=trial,
        max_steps=options.max_steps,
        live_patient=options.live_patient,
        protocol=options.protocol,
        literacy=options.literacy,
    )
    return {"run_id": run_id, "session_id": session_id, "language": language, "variant": variant, "trial": trial}
