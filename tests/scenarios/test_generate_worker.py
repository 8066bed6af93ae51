"""Generation on a real Celery worker (Redis): redelivered and re-dispatched slots never duplicate."""

from io import StringIO

import pytest
from celery.contrib.testing.worker import start_worker
from django.core.management import call_command

from physreview.celery import app as celery_app
from scenarios import services
from scenarios.models import RunStatus, Session
from scenarios.tasks import generate_session_task

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def _wait_for(run, indexes: set[int], timeout: float = 120.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if set(Session.objects.filter(run=run).values_list("run_index", flat=True)) >= indexes:
            return
        time.sleep(0.2)
    raise AssertionError(f"slots {indexes} not generated within {timeout}s")


def test_cut_run_resumed_on_a_worker_has_every_session_once(broker_url, demo_cohort):
    run = services.create_run(backend="rules", seed=9, scenarios=list(services.ALL_SCENARIOS), tiers=[1, 2, 3], n=6)
    celery_app.conf.task_always_eager = False
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            # The command was cut after dispatching three slots, and the broker delivered one twice.
            for index in (0, 1, 2, 1):
                generate_session_task.delay(run.pk, index)
            _wait_for(run, {0, 1, 2})
            services.mark_run(run_id=run.pk, status=RunStatus.INTERRUPTED)

            out = StringIO()
            call_command("generate", "--resume", str(run.pk), "--quiet", stdout=out)
    finally:
        celery_app.conf.task_always_eager = True
    assert "(3 to make) — dispatched to Celery workers" in out.getvalue()
    indexes = list(Session.objects.filter(run=run).order_by("run_index").values_list("run_index", flat=True))
    assert indexes == [0, 1, 2, 3, 4, 5]
    run.refresh_from_db()
    assert (run.status, run.made, run.rejected_by_gate) == (RunStatus.FINISHED, 6, 0)
