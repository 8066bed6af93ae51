"""Celery tasks of the review app: thin wrappers over its services."""

from celery import shared_task

from annotations.snapshots import services
from annotations.snapshots.errors import BuildInProgress
from core.jobs import LeaseLost


@shared_task(acks_late=True)
def build_snapshot_task(snapshot_id: int) -> dict:
    """Build a started snapshot (idempotent: frozen items are reused, a ready snapshot is left alone).
    A failure is stored on the snapshot (status ``failed`` with the error) and re-raised. A second delivery
    while a live process builds it (or after another took it over) ends here without writing."""
    try:
        snapshot = services.build_snapshot(snapshot_id=snapshot_id)
    except (BuildInProgress, LeaseLost) as exc:
        return {"snapshot_id": snapshot_id, "status": "building", "skipped": str(exc)}
    return {"snapshot": snapshot.label, "status": snapshot.status, "content_sha256": snapshot.content_sha256}
