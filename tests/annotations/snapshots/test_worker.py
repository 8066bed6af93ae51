"""The admin's Create snapshot on a real Celery worker (Redis): the page polls until the task is done."""

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.urls import reverse

from annotations.models import Snapshot, SnapshotStatus
from physreview.celery import app as celery_app
from tests.annotations.conftest import make_user
from tests.annotations.snapshots.conftest import approve_directly
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_admin_create_runs_on_a_worker_with_progress(broker_url, client):
    for _ in range(3):
        approve_directly(complete_session())
    staff = make_user("root", "admin")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    celery_app.conf.task_always_eager = False
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            response = client.post(
                reverse("admin:annotations_snapshot_create"), {"language": "both", "ehr_provenance": "synthetic"}
            )
            snap = Snapshot.objects.get()
            assert response["Location"] == reverse("admin:annotations_snapshot_change", args=[snap.pk])
            url = reverse("admin:annotations_snapshot_progress", args=[snap.pk])
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                poll = client.get(url, headers={"HX-Request": "true"})
                if "HX-Refresh" in poll:
                    break
                assert 'hx-trigger="every 1s"' in poll.content.decode()
                time.sleep(0.2)
    finally:
        celery_app.conf.task_always_eager = True
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.READY, snap.error
    assert snap.manifest["counts"]["sessions"] == 3 and snap.progress_stage == "done"
