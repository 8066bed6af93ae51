"""Issue 36, F4: Celery's redelivery was left to Kombu's defaults (no visibility timeout set: 1 h), and nothing
looked for jobs whose process had died. Settings now set the timeout and late acknowledgement deliberately,
check the heartbeat limits, and a worker sweeps for stale jobs from its start (worker_ready) on."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from celery.signals import worker_ready, worker_shutdown
from django.utils import timezone

from physreview import jobs
from physreview.celery import app
from scenarios import services
from scenarios.models import GenerationRun, RunStatus
from tests.databases import serves_concurrent_connections
from tests.physreview.startup import print_settings


def test_visibility_timeout_and_late_acks_are_set_deliberately(tmp_path):
    shown = print_settings(
        "s.CELERY_BROKER_TRANSPORT_OPTIONS, s.CELERY_TASK_ACKS_LATE, s.CELERY_TASK_REJECT_ON_WORKER_LOST",
        env={"CELERY_VISIBILITY_TIMEOUT": "120"},
        var_dir=tmp_path,
    )
    assert shown.stdout.strip() == "{'visibility_timeout': 120} True True", shown.stderr
    assert app.conf.broker_transport_options == {"visibility_timeout": 1800}  # the default, not Kombu's 3600
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost


def test_a_stale_limit_not_above_the_heartbeat_stops_start_up(tmp_path):
    shown = print_settings("1", env={"JOB_STALE_SECONDS": "10", "JOB_HEARTBEAT_SECONDS": "10"}, var_dir=tmp_path)
    assert shown.returncode != 0 and "JOB_STALE_SECONDS=10 must exceed JOB_HEARTBEAT_SECONDS=10" in shown.stderr


@pytest.mark.django_db(transaction=True)  # the sweeper thread reads committed rows through its own connection
def test_a_worker_sweeps_from_its_start(demo_cohort, settings):
    if not serves_concurrent_connections():
        pytest.skip("needs a test database a second connection can open")
    settings.JOB_STALE_SECONDS, settings.JOB_SWEEP_SECONDS = 60, 1
    run = services.create_run(backend="rules", seed=8, scenarios=["med_safety"], tiers=[1], n=1)
    services.generate_slot(run_id=run.pk, index=0)
    GenerationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - dt.timedelta(minutes=5))
    worker_ready.send(sender=None)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not GenerationRun.objects.filter(status=RunStatus.FINISHED).exists():
            time.sleep(0.2)
    finally:
        worker_shutdown.send(sender=None)
    assert GenerationRun.objects.get(pk=run.pk).status == RunStatus.FINISHED
    assert jobs._sweeper is None  # stopped with the worker
