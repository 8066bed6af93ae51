"""Snapshot builds that stopped (their process was killed): found by a stale heartbeat, resumed or failed.

Run by the sweeps of :mod:`physreview.jobs` (the Celery worker at start and every ``JOB_SWEEP_SECONDS``;
``make_snapshot`` at start), so nobody has to notice a build stuck in ``building``. Also the admin's and the
API's *resume* (:func:`resume`).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from annotations.models import Snapshot, SnapshotStatus
from annotations.snapshots import services
from annotations.tasks import build_snapshot_task
from core import jobs

logger = logging.getLogger(__name__)


def stale_builds():
    """``building`` snapshots whose heartbeat is older than ``JOB_STALE_SECONDS``, or that never started
    (no heartbeat, created that long ago: the task's message was lost)."""
    cutoff = jobs.stale_cutoff()
    never_started = Q(heartbeat_at__isnull=True, created__lt=cutoff)
    return Snapshot.objects.filter(Q(heartbeat_at__lt=cutoff) | never_started, status=SnapshotStatus.BUILDING)


def recover_stale() -> list[str]:
    """Resume each stale build on a worker (in-process without a broker), or mark it ``failed`` with the reason
    once it has been resumed ``JOB_MAX_AUTO_RESUMES`` times. Each takeover is a compare-and-set on the row
    (worker and heartbeat as read), so concurrent sweeps resume a build once. Returns what was done, in words."""
    done = []
    for snap in stale_builds():
        seen = Snapshot.objects.filter(
            pk=snap.pk, status=SnapshotStatus.BUILDING, worker=snap.worker, heartbeat_at=snap.heartbeat_at
        )
        silent = "never started" if snap.heartbeat_at is None else f"no heartbeat since {snap.heartbeat_at:%H:%M:%S}"
        if snap.resumes >= settings.JOB_MAX_AUTO_RESUMES:
            error = (
                f"stopped: {silent}, after {snap.resumes} automatic "
                f"{'resume' if snap.resumes == 1 else 'resumes'}; "
                "resume it from the admin, the API or `make_snapshot --resume`"
            )
            if seen.update(status=SnapshotStatus.FAILED, worker="", error=error, progress_stage="failed"):
                done.append(f"snapshot {snap.label} failed ({error})")
            continue
        if not seen.update(worker="", heartbeat_at=timezone.now(), resumes=F("resumes") + 1):
            continue  # another sweep took it first, or its holder came back
        done.append(f"snapshot {snap.label} resumed ({silent})")
        try:
            build_snapshot_task.delay(snap.pk)
        except Exception as exc:  # in-process without a broker (the failure is on the row), or the broker is away
            logger.warning("resumed snapshot %s failed: %s", snap.label, exc)
    for line in done:
        logger.warning(line)
    return done


def resume(*, snapshot: Snapshot) -> Snapshot:
    """A person's resume (admin, API) of a failed or stale build: queued again for a worker (built in-process
    without a broker). Raises ``SnapshotError`` for a ready snapshot or a live build."""
    snapshot = services.resume_snapshot(snapshot=snapshot)
    build_snapshot_task.delay_on_commit(snapshot.pk)
    return snapshot


def resumable_ids() -> set[int]:
    """Snapshots a person may resume: failed, or building with a stale heartbeat (or never started)."""
    failed = set(Snapshot.objects.filter(status=SnapshotStatus.FAILED).values_list("pk", flat=True))
    return failed | set(stale_builds().values_list("pk", flat=True))
