"""Celery tasks of the review app: thin wrappers over its services."""

from celery import shared_task

from annotations.snapshots import services


@shared_task(acks_late=True)
def build_snapshot_task(snapshot_id: int) -> dict:
    """Build a started snapshot (idempotent: frozen items are reused, a ready snapshot is left alone).
    A failure is stored on the snapshot (status ``failed`` with the error) and re-raised."""
    snapshot = services.build_snapshot(snapshot_id=snapshot_id)
    return {"snapshot": snapshot.label, "status": snapshot.status, "content_sha256": snapshot.content_sha256}
