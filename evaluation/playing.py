"""While a run is played: one player at a time (a lease with a heartbeat), active time, the honest end
status, and worker processes that die with their parent.

* **Lease.** ``EvalRun.lease_owner`` / ``lease_until``: the process playing a run claims it with one
  conditional UPDATE and renews the claim every :data:`HEARTBEAT_S` seconds; a claim lapses
  :data:`LEASE_S` seconds after its last renewal, or at once when its owner was a process on this host
  that no longer exists (``kill -9``). A second ``runeval --resume`` of a run being played gets
  :class:`RunBusyError` naming the player, never a duplicate-key error halfway through.
* **Active time.** Each heartbeat (and the end of the play) adds the time played since the last one to
  ``EvalRun.active_s``, so a resumed run reports the time spent playing, not the gap between plays.
* **End status.** ``finished`` only when every expected turn is stored without an infrastructure
  error; otherwise ``partial``, with the pending turns counted (:func:`pending_turns`).
* **Worker processes** (``runeval --processes N``) ask the kernel for SIGKILL when their parent dies
  (``prctl(PR_SET_PDEATHSIG)`` on Linux) and also watch their parent's pid (other systems).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import F, Q
from django.utils import timezone

from core.llm import CallLog
from evaluation.models import EvalRun, EvalStatus, TurnResult

log = logging.getLogger(__name__)
LEASE_S = 30.0
HEARTBEAT_S = 5.0
_PR_SET_PDEATHSIG = 1
_WATCH_S = 1.0


class RunBusyError(Exception):
    """The run is being played by another process (its lease is held and renewed)."""


class RunConflictError(RuntimeError):
    """Another process stored a turn this one was playing: the run was played twice at once."""


@dataclass(frozen=True)
class Pending:
    expected: int
    stored_ok: int
    infra_error: int

    @property
    def turns(self) -> int:
        return max(self.expected - self.stored_ok, 0)

    @property
    def not_played(self) -> int:
        return max(self.turns - self.infra_error, 0)

    def as_dict(self) -> dict[str, int]:
        return {
            "turns": self.turns,
            "not_played": self.not_played,
            "infra_error": self.infra_error,
            "expected_turns": self.expected,
        }


def pending_turns(*, run: EvalRun, expected: int | None = None) -> Pending:
    """Turns still to play: expected turns without a stored, infrastructure-error-free result."""
    if expected is None:
        expected = run.expected_turns
    results = TurnResult.objects.filter(run=run)
    infra = results.exclude(infra_error="").count()
    ok = results.filter(infra_error="").count()
    return Pending(expected=ok + infra if expected is None else expected, stored_ok=ok, infra_error=infra)


def end_status(*, run: EvalRun, expected: int) -> EvalRun:
    """Mark the play over: ``finished`` when nothing is pending, else ``partial``."""
    pending = pending_turns(run=run, expected=expected)
    status = EvalStatus.FINISHED if pending.turns == 0 else EvalStatus.PARTIAL
    EvalRun.objects.filter(pk=run.pk).update(
        status=status, finished_at=timezone.now(), error="", expected_turns=expected
    )
    run.refresh_from_db()
    return run


def stop_status(*, run: EvalRun, exc: BaseException) -> None:
    """Mark the play stopped by ``exc``: ``interrupted`` on Ctrl-C, else ``failed`` (finished turns stay)."""
    status = EvalStatus.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EvalStatus.FAILED
    EvalRun.objects.filter(pk=run.pk).update(status=status, error=f"{type(exc).__name__}: {exc}")


# --- lease -----------------------------------------------------------------------------------------


def _owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _holder_gone(owner: str) -> bool:
    """Whether ``owner`` ("host:pid:token") was a process of this host that has ended."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's process with that pid: alive
        return False
    try:  # an unreaped zombie has ended too
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


class RunLease:
    """This process's claim on a run; renewed by a heartbeat thread until :meth:`release`."""

    def __init__(self, *, run_id: int, owner: str, lease_s: float, heartbeat_s: float) -> None:
        self.run_id, self.owner = run_id, owner
        self.lease_s, self.heartbeat_s = lease_s, heartbeat_s
        self._stop = threading.Event()
        self._counted = time.monotonic()
        self._count_lock = threading.Lock()
        self._thread = threading.Thread(target=self._beat, name=f"runeval-lease-{run_id}", daemon=True)

    def _add_active(self, **extra: Any) -> int:
        with self._count_lock:
            now = time.monotonic()
            elapsed, self._counted = now - self._counted, now
        return EvalRun.objects.filter(pk=self.run_id, lease_owner=self.owner).update(
            active_s=F("active_s") + max(elapsed, 0.0), **extra
        )

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.heartbeat_s):
                try:
                    renewed = self._add_active(lease_until=timezone.now() + timedelta(seconds=self.lease_s))
                except DatabaseError:
                    log.warning("run %s: could not renew its lease", self.run_id, exc_info=True)
                    continue
                if not renewed:
                    log.warning("run %s: its lease was taken over by another process", self.run_id)
        finally:
            connection.close()

    def release(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.heartbeat_s + 5)
        self._add_active(lease_owner="", lease_until=None)


def acquire_lease(*, run: EvalRun, lease_s: float = LEASE_S, heartbeat_s: float = HEARTBEAT_S) -> RunLease:
    """Claim ``run`` for this process; raises :class:`RunBusyError` if another process plays it."""
    owner = _owner_id()
    now = timezone.now()
    until = now + timedelta(seconds=lease_s)
    free = Q(lease_owner="") | Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    claimed = EvalRun.objects.filter(free, pk=run.pk).update(lease_owner=owner, lease_until=until)
    if not claimed:
        holder = EvalRun.objects.filter(pk=run.pk).values("lease_owner", "lease_until").first() or {}
        held_by = holder.get("lease_owner") or ""
        if held_by and _holder_gone(held_by):  # compare-and-swap: only if nobody else took it meanwhile
            taken = EvalRun.objects.filter(pk=run.pk, lease_owner=held_by)
            claimed = taken.update(lease_owner=owner, lease_until=until)
        if not claimed:
            host, _, rest = held_by.partition(":")
            raise RunBusyError(
                f"run {run.pk} is being played by process {rest.partition(':')[0]} on {host} (its claim is renewed "
                f"every {heartbeat_s:g} s and lapses {lease_s:g} s after that process stops); wait for it to end, "
                "or stop it, before resuming"
            )
    lease = RunLease(run_id=run.pk, owner=owner, lease_s=lease_s, heartbeat_s=heartbeat_s)
    # Inside a transaction (tests) the claim is invisible to other connections until commit anyway.
    if not connection.in_atomic_block:
        lease._thread.start()
    return lease


@contextlib.contextmanager
def playing(*, run: EvalRun) -> Iterator[RunLease]:
    """The run's lease and active-time count for the ``with`` block."""
    lease = acquire_lease(run=run)
    try:
        yield lease
    finally:
        lease.release()


# --- worker processes ------------------------------------------------------------------------------


def die_with_parent(*, parent_pid: int) -> None:
    """In a forked worker: end this process when ``parent_pid`` ends (even by ``kill -9``)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            log.debug("prctl(PR_SET_PDEATHSIG) unavailable; watching the parent instead", exc_info=True)
    if os.getppid() != parent_pid:  # the parent died before the request above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_WATCH_S)
        os._exit(1)

    threading.Thread(target=watch, name="runeval-parent-watch", daemon=True).start()


# --- time of one turn ------------------------------------------------------------------------------


def turn_timing(trace: dict[str, Any], calls: CallLog) -> dict[str, float]:
    """The turn's ``timing`` with retry backoff and failed calls taken out of the harness time.

    ``model_s``: time in model calls without the backoff between attempts (``backoff_s``), failed calls
    included; ``harness_s``: the rest of the turn besides the tools (prompt building, judging is not
    part of a turn). Rules agents make no client calls: their own latency is the model time.
    """
    timing = dict(trace.get("timing") or {})
    usage = trace.get("usage") or {}
    wall, tools = float(timing.get("wall_s") or 0.0), float(timing.get("tools_s") or 0.0)
    if calls.results or calls.failures:
        model_total = sum(r.latency_s for r in calls.results) + calls.failed_s
    else:
        model_total = float(usage.get("model_latency_s") or 0.0)
    backoff = min(calls.backoff_s, model_total)
    return {
        **timing,
        "model_s": round(model_total - backoff, 6),
        "backoff_s": round(backoff, 6),
        "harness_s": round(max(wall - model_total - tools, 0.0), 6),
    }
