"""runeval --workers celery: in-process without a broker, and on a real worker over Redis."""

import json

import pytest
from celery.contrib.testing.worker import start_worker
from django.core.management import call_command

from evaluation.models import EvalRun, TurnResult
from physreview.celery import app as celery_app
from tests.evaluation.conftest import make_sessions


def _run(tmp_path, *args):
    call_command("runeval", *args, "--sessions", "all", "--quiet", "--output", str(tmp_path))
    return json.loads((tmp_path / "summary.json").read_text())


def test_celery_mode_without_broker_matches_local(sessions, tmp_path):
    local = _run(tmp_path / "local", "--model", "rules:heuristic", "--language", "both")
    tasks = _run(tmp_path / "celery", "--model", "rules:heuristic", "--language", "both", "--workers", "celery")
    assert tasks["metrics"] == local["metrics"]
    assert EvalRun.objects.get(pk=tasks["run_id"]).status == "finished"


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_real_worker_with_a_redelivered_job(broker_url, demo_cohort, tmp_path):
    make_sessions(n=3, seed=13)
    local = _run(tmp_path / "local", "--model", "rules:oracle")
    celery_app.conf.task_always_eager = False
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            summary = _run(tmp_path / "celery", "--model", "rules:oracle", "--workers", "celery")
            run = EvalRun.objects.get(pk=summary["run_id"])
            # A job delivered twice (e.g. a worker lost before acking) adds nothing.
            from evaluation.tasks import run_eval_job_task

            first = run.manifest["dataset"]["session_ids"][0]
            run_eval_job_task.delay(run.pk, first, "en", "implicit", 0).get(timeout=60)
    finally:
        celery_app.conf.task_always_eager = True
    assert TurnResult.objects.filter(run=run).count() == 12
    assert summary["metrics"] == local["metrics"]
