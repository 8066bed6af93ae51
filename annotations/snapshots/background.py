"""Snapshots built in the background: the admin and the API start one here and a Celery task builds it.

Apart from :mod:`annotations.snapshots.services` because the task module imports those services: keeping the
dispatch here means neither module imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from annotations.models import Snapshot
from annotations.snapshots.services import start_snapshot
from annotations.tasks import build_snapshot_task


def request_snapshot(
    *,
    user: Any,
    scenarios: Iterable[str] | None = None,
    tiers: Iterable[int] | None = None,
    languages: Iterable[str] | None = None,
    ehr_provenance: str = "undeclared",
    force: bool = False,
) -> Snapshot:
    """Start a snapshot and build it in the Celery task ``build_snapshot_task`` after commit (admin, API).
    Without a broker the task runs in-process, so the snapshot is ready on return. The checks of
    :func:`start_snapshot` (duplicate content included, unless ``force``) run in the request."""
    snapshot = start_snapshot(
        user=user,
        scenarios=scenarios,
        tiers=tiers,
        languages=languages,
        ehr_provenance=ehr_provenance,
        force=force,
    )
    build_snapshot_task.delay_on_commit(snapshot.pk)
    return snapshot
