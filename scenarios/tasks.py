"""Celery tasks of the generation pipeline: thin wrappers over :mod:`scenarios.services`."""

from celery import shared_task

from core import jobs
from scenarios import services
from scenarios.models import GenerationRun, RunStatus


@shared_task(acks_late=True)
def generate_session_task(run_id: int, index: int) -> dict:
    """One session slot. Idempotent (keyed by run and index), so late acknowledgement is safe. The run's
    heartbeat is refreshed while the slot works and when it ends, so a run whose command died stays alive
    while its slots are being made (``scenarios.recovery``)."""
    running = GenerationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    jobs.touch(queryset=running)
    with jobs.Heartbeat(queryset=running):
        session = services.generate_slot(run_id=run_id, index=index)
    jobs.touch(queryset=running)
    return {
        "index": index,
        "session_id": session.session_id if session else None,
        "status": session.status if session else "no_candidate",
    }
