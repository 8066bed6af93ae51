"""Issue 36, F4: a generation run stayed ``running`` when its ``generate`` command was killed, and with workers
the command waited forever when a slot's task was lost with its worker (58 of 60 slots made); only
``generate --resume`` by hand moved it on. Here a dead run is the row such a command leaves: ``running`` with an
old heartbeat. The sweeps must finish, resume or fail it; the wait loop must give up with a reason and say what
it waits for; the admin offers resume. (Processes killed for real: tests/physreview/test_job_faults.py.)
"""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from physreview.celery import app as celery_app
from physreview.jobs import sweep_stale_jobs
from scenarios import services
from scenarios.models import GenerationRun, RunStatus, Session

pytestmark = pytest.mark.django_db


def _run(*, made: list[int], n: int = 4, seed: int = 5, minutes_ago: float = 10, resumes: int = 0) -> GenerationRun:
    """A run whose command was killed after the slots ``made`` were stored."""
    run = services.create_run(backend="rules", seed=seed, scenarios=list(services.ALL_SCENARIOS), tiers=[1], n=n)
    for index in made:
        services.generate_slot(run_id=run.pk, index=index)
    GenerationRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - dt.timedelta(minutes=minutes_ago), resumes=resumes
    )
    run.refresh_from_db()
    return run


def _indexes(run: GenerationRun) -> list[int]:
    return list(Session.objects.filter(run=run).order_by("run_index").values_list("run_index", flat=True))


def test_a_dead_run_with_every_slot_made_is_finished(demo_cohort, settings):
    settings.JOB_STALE_SECONDS = 60
    run = _run(made=[0, 1, 2, 3])
    [line] = sweep_stale_jobs()
    run.refresh_from_db()
    assert line.startswith(f"run {run.pk} finished") and run.status == RunStatus.FINISHED
    assert run.made + run.rejected_by_gate == 4 and run.finished_at is not None


def test_a_dead_run_missing_slots_is_resumed_without_duplicates(demo_cohort, settings):
    settings.JOB_STALE_SECONDS = 60
    run = _run(made=[0, 2])
    [line] = sweep_stale_jobs()
    assert line.startswith(f"run {run.pk} resumed") and "slots 1, 3 dispatched again" in line
    run.refresh_from_db()  # without a broker the slots ran here, and the run was finished
    assert run.status == RunStatus.FINISHED and run.resumes == 1
    assert _indexes(run) == [0, 1, 2, 3]


def test_a_run_that_keeps_stalling_is_failed_with_the_missing_slots(demo_cohort, settings):
    settings.JOB_STALE_SECONDS, settings.JOB_MAX_AUTO_RESUMES = 60, 2
    run = _run(made=[0], resumes=2)
    [line] = sweep_stale_jobs()
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and line.startswith(f"run {run.pk} failed")
    assert "slots 1, 2, 3 still missing" in run.stop_reason and f"--resume {run.pk}" in run.stop_reason
    assert _indexes(run) == [0]


def test_a_live_run_is_left_alone(demo_cohort, settings):
    settings.JOB_STALE_SECONDS = 60
    run = _run(made=[0], minutes_ago=0.2)
    assert sweep_stale_jobs() == []
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and _indexes(run) == [0]


def test_generate_finishes_a_dead_run_before_its_own(demo_cohort, settings):
    settings.JOB_STALE_SECONDS = 60
    dead = _run(made=[0, 1], n=2)
    err = StringIO()
    call_command("generate", "--n", "1", "--seed", "77", "--quiet", stdout=StringIO(), stderr=err)
    assert f"stale run {dead.pk} finished" in err.getvalue()
    dead.refresh_from_db()
    assert dead.status == RunStatus.FINISHED


def test_admin_resumes_a_failed_run(client, demo_cohort):
    run = _run(made=[1])
    GenerationRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, stop_reason="stopped", resumes=3)
    url = reverse("admin:scenarios_generationrun_changelist")
    viewer = get_user_model().objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_generationrun"))
    client.force_login(viewer)
    assert "resume_runs" not in client.get(url).content.decode()  # may view runs, not resume them
    admin = get_user_model().objects.create_superuser("root", password="x")
    client.force_login(admin)
    response = client.post(url, {"action": "resume_runs", "_selected_action": [run.pk]})
    assert response.status_code == 302
    run.refresh_from_db()
    assert (run.status, run.resumes, run.stop_reason) == (RunStatus.FINISHED, 0, "")
    assert _indexes(run) == [0, 1, 2, 3]


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_the_wait_loop_has_a_deadline_and_says_what_it_waits_for(broker_url, demo_cohort, settings):
    """No worker at all (every task lost): the command re-dispatches once, then fails the run with the reason."""
    settings.JOB_MAX_AUTO_RESUMES = 1
    err = StringIO()
    celery_app.conf.task_always_eager = False
    try:
        with pytest.raises(CommandError) as failed:
            call_command("generate", "--n", "2", "--seed", "3", "--quiet", "--wait-timeout", "2", stderr=err)
    finally:
        celery_app.conf.task_always_eager = True
        celery_app.control.purge()
    run = GenerationRun.objects.get()
    assert str(failed.value).startswith(f"run {run.pk} failed: no slot finished for 2 s after 1 re-dispatch(es)")
    assert "slot(s) 0, 1 still missing. Is a Celery worker running?" in str(failed.value)
    said = err.getvalue()
    assert f"run {run.pk}: waiting for 2 slot(s) (0, 1); none finished for" in said
    assert "dispatched slot(s) 0, 1 again (1/1)" in said
    assert run.status == RunStatus.FAILED and "still missing" in run.stop_reason


def test_an_import_run_is_never_swept_and_a_broken_run_does_not_stop_the_others(demo_cohort, settings):
    settings.JOB_STALE_SECONDS = 60
    old = timezone.now() - dt.timedelta(minutes=10)
    run = _run(made=[0, 1, 2, 3])
    imported = GenerationRun.objects.create(backend="import", status=RunStatus.RUNNING, heartbeat_at=old)
    # Newer, so swept first; parameters without scenarios: its slots cannot be listed (KeyError).
    broken = GenerationRun.objects.create(backend="rules", status=RunStatus.RUNNING, heartbeat_at=old, requested=2)
    assert [line.split(" (")[0] for line in sweep_stale_jobs()] == [f"run {run.pk} finished"]
    assert GenerationRun.objects.get(pk=imported.pk).status == RunStatus.RUNNING
    assert GenerationRun.objects.get(pk=broken.pk).status == RunStatus.RUNNING
