"""Concurrent snapshot creation on real database connections gets distinct versions (PostgreSQL)."""

import threading

import pytest
from django.db import connections

from annotations.models import Snapshot, SnapshotStatus
from annotations.snapshots import services
from tests.annotations.snapshots.conftest import approve_directly
from tests.databases import serves_concurrent_connections
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(not serves_concurrent_connections(), reason="needs a database that serves several connections")
def test_concurrent_creates_get_distinct_versions_and_identical_files():
    approve_directly(complete_session())
    n = 4
    barrier = threading.Barrier(n)
    made: list[str] = []
    errors: list[BaseException] = []

    def create():
        try:
            barrier.wait(timeout=10)
            # Same content each time: forced (the duplicate refusal is not what this test is about).
            made.append(services.create_snapshot(user=None, force=True).label)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=create) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert sorted(made) == [f"v{i}" for i in range(1, n + 1)]
    snaps = list(Snapshot.objects.order_by("version"))
    assert [s.status for s in snaps] == [SnapshotStatus.READY] * n
    assert len({s.content_sha256 for s in snaps}) == 1
