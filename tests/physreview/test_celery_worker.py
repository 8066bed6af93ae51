"""A real Celery worker on Redis runs a real task (the MIMIC importer) against the test database."""

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.core.management import call_command

from ehr.models import Admission, Patient
from ehr.tasks import import_mimic_dir
from physreview.celery import app as celery_app

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_worker_on_redis_runs_the_import_task(broker_url, tmp_path):
    cohort = tmp_path / "cohort"
    call_command("synth_ehr", "--patients", "3", "--seed", "7", "--out", str(cohort), "--quiet")
    celery_app.conf.task_always_eager = False
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            result = import_mimic_dir.delay(str(cohort))
            rows = result.get(timeout=120)
    finally:
        celery_app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
    assert result.successful()
    assert rows["patients"] == Patient.objects.count() == 3
    assert rows["admissions"] == Admission.objects.count() >= 3
