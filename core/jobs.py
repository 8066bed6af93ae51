"""Heartbeats of background jobs (snapshot builds, generation runs): who holds a job and whether it still lives.

A job row carries ``heartbeat_at`` (refreshed while someone works on it) and, for jobs that must never run twice
at once (snapshot builds), ``worker`` (the holder's token, empty when nobody holds it). A process that dies with
``kill -9`` stops refreshing; once ``heartbeat_at`` is older than ``JOB_STALE_SECONDS`` the job counts as stale
and the sweeps (``physreview.jobs``: the Celery worker every ``JOB_SWEEP_SECONDS``, and the ``make_snapshot`` /
``generate`` commands at start) resume it or, after ``JOB_MAX_AUTO_RESUMES``, fail it with a reason.

Every change of holder is one conditional ``UPDATE`` (compare-and-set on the row), so two processes that both
see a stale job cannot both take it.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import uuid

from django.conf import settings
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

logger = logging.getLogger(__name__)


class LeaseLost(Exception):
    """Another process took over this job (its heartbeat had gone stale); stop without writing more."""


def owner_token(kind: str) -> str:
    """``kind:host:pid:random``, unique per attempt."""
    return f"{kind}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:120]


def stale_cutoff() -> dt.datetime:
    return timezone.now() - dt.timedelta(seconds=settings.JOB_STALE_SECONDS)


def claim(*, queryset: QuerySet, owner: str, **fields) -> bool:
    """Take the job in ``queryset`` (one row) if nobody holds it or its holder's heartbeat is stale; ``fields``
    are set in the same ``UPDATE``. False when a live holder has it."""
    free = Q(worker="") | Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale_cutoff())
    return queryset.filter(free).update(worker=owner, heartbeat_at=timezone.now(), **fields) == 1


def holds(*, queryset: QuerySet, owner: str) -> bool:
    return queryset.filter(worker=owner).exists()


def touch(*, queryset: QuerySet) -> int:
    return queryset.update(heartbeat_at=timezone.now())


class Heartbeat:
    """Refreshes ``heartbeat_at`` of ``queryset`` every ``JOB_HEARTBEAT_SECONDS`` from a thread (own database
    connection) while a job runs, including while the job's own connection sits in a long transaction.

    Use as a context manager. A failed beat (database busy) is logged and retried at the next interval."""

    def __init__(self, *, queryset: QuerySet, interval_s: float | None = None) -> None:
        self.queryset = queryset
        self.interval_s = interval_s if interval_s is not None else settings.JOB_HEARTBEAT_SECONDS
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="job-heartbeat", daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                try:
                    touch(queryset=self.queryset)
                except Exception as exc:  # a missed beat must not end the job
                    logger.warning("heartbeat of %s missed: %s", self.queryset.model.__name__, exc)
        finally:
            connection.close()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 35)  # a beat may wait for SQLite's 30 s busy timeout
