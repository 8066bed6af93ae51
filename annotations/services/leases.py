"""Edit leases: one live holder per turn; expired leases are taken over. Advisory for saves
(optimistic locking in :mod:`annotations.services.edits` is what guarantees no edit is lost)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotations.models import Lease
from annotations.services.errors import InvalidState, LeaseHeld
from scenarios.models import Turn

DEFAULT_TTL = dt.timedelta(minutes=2)


def _locked(turn: Turn) -> Lease | None:
    # The turn row serialises lease changes (the lease row may not exist yet to lock it).
    if not list(Turn.objects.select_for_update(no_key=True).filter(pk=turn.pk).values_list("pk", flat=True)):
        raise InvalidState(_("This turn no longer exists."))
    return Lease.objects.select_related("holder").filter(turn=turn).first()


@transaction.atomic
def acquire_lease(*, turn: Turn, user: Any, ttl: dt.timedelta = DEFAULT_TTL) -> Lease:
    """Take (or extend) the lease on ``turn`` for ``ttl``. Locks the turn row (``select_for_update``;
    on SQLite the transaction begins IMMEDIATE, so two writers queue instead of one failing).

    Raises :class:`LeaseHeld` (holder, expiry) when another user's lease is still live.
    """
    now = timezone.now()
    lease = _locked(turn)
    if lease and lease.holder_id != user.pk and lease.live(now=now):
        raise LeaseHeld(holder=lease.holder.get_username(), expires_at=lease.expires_at)
    if lease is None:
        return Lease.objects.create(turn=turn, holder=user, acquired_at=now, expires_at=now + ttl)
    if lease.holder_id != user.pk or not lease.live(now=now):
        lease.acquired_at = now  # a takeover or a fresh start after expiry
    lease.holder, lease.expires_at = user, now + ttl
    lease.save()
    return lease


def renew(*, turn: Turn, user: Any, ttl: dt.timedelta = DEFAULT_TTL) -> Lease:
    """Heartbeat: extend the caller's lease (re-acquires it if it lapsed and nobody took it).
    Locks the turn row; raises :class:`LeaseHeld` if someone else holds it now."""
    return acquire_lease(turn=turn, user=user, ttl=ttl)


@transaction.atomic
def release(*, turn: Turn, user: Any) -> bool:
    """Drop the caller's lease (no-op if they do not hold it). Locks the turn row. True if released."""
    lease = _locked(turn)
    if lease is None or lease.holder_id != user.pk:
        return False
    lease.delete()
    return True
