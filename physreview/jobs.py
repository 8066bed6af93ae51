"""Background jobs recover without a person: the Celery worker sweeps for stale ones.

At worker start (``worker_ready``) and then every ``JOB_SWEEP_SECONDS`` a thread of the worker's main process
looks for snapshot builds and generation runs whose heartbeat is older than ``JOB_STALE_SECONDS`` (their process
was killed) and resumes or fails them (:mod:`annotations.snapshots.recovery`, :mod:`scenarios.recovery`).
Several workers may sweep at once: every takeover is a compare-and-set on the job's row. docs/operations.md.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection

from annotations.snapshots import recovery as snapshot_recovery
from scenarios import recovery as run_recovery

logger = logging.getLogger(__name__)


def sweep_stale_jobs() -> list[str]:
    """One sweep over snapshots and generation runs; what was done, in words. A kind that fails (its table
    locked, the broker away) is logged and does not stop the other."""
    done = []
    for recover in (snapshot_recovery.recover_stale, run_recovery.recover_stale):
        try:
            done += recover()
        except Exception:
            logger.exception("sweep of stale jobs failed (%s)", recover.__module__)
    return done


class Sweeper:
    def __init__(self, *, every_s: int) -> None:
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="job-sweeper", daemon=True)

    def _run(self) -> None:
        try:
            while True:
                close_old_connections()
                sweep_stale_jobs()  # a kind that fails (database away) is tried again next time
                if self._stop.wait(self.every_s):
                    return
        finally:
            connection.close()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


_sweeper: Sweeper | None = None


def start_sweeper() -> None:
    global _sweeper
    if settings.JOB_SWEEP_SECONDS and _sweeper is None:
        _sweeper = Sweeper(every_s=settings.JOB_SWEEP_SECONDS)
        _sweeper.start()


def stop_sweeper() -> None:
    global _sweeper
    if _sweeper is not None:
        _sweeper.stop()
        _sweeper = None
