import datetime as dt

import pytest
from django.utils import timezone

from annotations import services
from annotations.models import Lease


def test_lease_held_names_holder_and_expiry(turn, reviewers):
    lease = services.acquire_lease(turn=turn, user=reviewers[0], ttl=dt.timedelta(minutes=2))
    with pytest.raises(services.LeaseHeld) as info:
        services.acquire_lease(turn=turn, user=reviewers[1], ttl=dt.timedelta(minutes=2))
    assert info.value.holder == "rev1" and info.value.expires_at == lease.expires_at
    assert "rev1" in str(info.value)


def test_expired_lease_is_taken_over(turn, reviewers):
    services.acquire_lease(turn=turn, user=reviewers[0], ttl=dt.timedelta(minutes=2))
    Lease.objects.filter(turn=turn).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    lease = services.acquire_lease(turn=turn, user=reviewers[1], ttl=dt.timedelta(minutes=2))
    assert lease.holder == reviewers[1] and Lease.objects.count() == 1
    with pytest.raises(services.LeaseHeld):
        services.renew(turn=turn, user=reviewers[0])


def test_renew_extends_and_release_frees(turn, reviewers):
    first = services.acquire_lease(turn=turn, user=reviewers[0], ttl=dt.timedelta(seconds=30))
    renewed = services.renew(turn=turn, user=reviewers[0], ttl=dt.timedelta(minutes=5))
    assert renewed.expires_at > first.expires_at and renewed.acquired_at == first.acquired_at
    assert services.release(turn=turn, user=reviewers[1]) is False
    assert services.release(turn=turn, user=reviewers[0]) is True
    assert services.acquire_lease(turn=turn, user=reviewers[1]).holder == reviewers[1]


def test_lease_calls_on_a_deleted_turn_say_so(turn, reviewers):
    # A page left open while its turn was deleted (a re-import): its heartbeat or release must not 500.
    services.acquire_lease(turn=turn, user=reviewers[0])
    Lease.objects.filter(turn=turn).delete()
    turn.session.delete()
    for call in (services.acquire_lease, services.release):
        with pytest.raises(services.InvalidState, match="no longer exists"):
            call(turn=turn, user=reviewers[0])
