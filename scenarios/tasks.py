"""Celery tasks of the generation pipeline: thin wrappers over :mod:`scenarios.services`."""

from celery import shared_task

from scenarios import services


@shared_task(acks_late=True)
def generate_session_task(run_id: int, index: int) -> dict:
    """One session slot. Idempotent (keyed by run and index), so late acknowledgement is safe."""
    session = services.generate_slot(run_id=run_id, index=index)
    return {
        "index": index,
        "session_id": session.session_id if session else None,
        "status": session.status if session else "no_candidate",
    }
