"""Issue 36, F4 (acceptance): jobs recover without a person after ``kill -9``.

The probe found a snapshot left ``building`` forever when its worker or ``make_snapshot`` was killed, and a
``generate`` run left ``running`` (its command waiting forever) when a slot's task was lost with its worker;
each needed a manual ``--resume``. Here a real Celery worker, ``make_snapshot`` and ``generate`` run in their own
processes on the test database and Redis; one of them is killed with SIGKILL mid-job, only a worker is started
again, and each job must end (ready / finished) within a bounded time, with no command typed, every item or
session exactly once and no half-written folder left. A short stale limit (JOB_STALE_SECONDS=4) keeps it quick.
"""

from __future__ import annotations

import sys

import pytest
import redis

from annotations.models import Snapshot, SnapshotItem, SnapshotStatus
from annotations.snapshots import services as snapshot_services
from annotations.snapshots.selectors import snapshot_dir, snapshots_root
from physreview.celery import app as celery_app
from scenarios.models import GenerationRun, RunStatus, Session
from tests.annotations.conftest import make_user
from tests.annotations.snapshots.conftest import approve_directly
from tests.databases import serves_concurrent_connections
from tests.physreview import job_processes as jp
from tests.scenarios.factories import complete_session

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kills processes by pid"),
]
FAST = {"JOB_STALE_SECONDS": "4", "JOB_HEARTBEAT_SECONDS": "1", "JOB_SWEEP_SECONDS": "1"}
BOUND_S = 120  # every recovery must be over within this (generous for a loaded 2-core machine)


@pytest.fixture
def env(broker_url, tmp_path, settings):
    if not serves_concurrent_connections():
        pytest.skip("needs a test database other processes can open (SQLite file or PostgreSQL)")
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    yield {"CELERY_BROKER_URL": broker_url, "PHYSREVIEW_VAR_DIR": str(settings.VAR_DIR), **FAST}
    # A killed worker's message stays in Redis's unacknowledged set; do not leave it to a later run.
    redis.Redis.from_url(broker_url).delete("unacked", "unacked_index", "unacked_mutex")
    celery_app.control.purge()


@pytest.fixture
def procs():
    started = []
    yield started
    for proc in started:
        jp.stop(proc)


def _curated(n: int) -> None:
    for i in range(n):
        approve_directly(complete_session(record_id=f"med_safety_{i}"))


def _assert_built_once(snap: Snapshot, sessions: int) -> None:
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.READY, snap.error
    assert Snapshot.objects.count() == 1  # no second snapshot made
    assert SnapshotItem.objects.filter(snapshot=snap).count() == sessions  # every item once
    folder = snapshot_dir(snapshot=snap)
    sums = (folder / "SHA256SUMS").read_text()
    assert snapshot_services.sha256sums(snap.manifest["files"]) == sums
    assert not list(snapshots_root().glob(f".{snap.label}.*")), "a half-written temporary folder is left"
    assert snap.worker == "" and snap.resumes >= 1


def _stage(snap: Snapshot, stage: str):
    return lambda: Snapshot.objects.filter(pk=snap.pk, progress_stage=stage).exists()


def test_snapshot_whose_worker_is_killed_is_finished_by_the_restarted_worker(env, procs, tmp_path):
    _curated(4)
    snap = snapshot_services.start_snapshot(user=make_user("boss", "admin"))
    log = tmp_path / "worker.log"
    procs.append(jp.start("worker", env={**env, "SLOW_JOB_SECONDS": "1.5"}, log=log))
    celery_app.conf.task_always_eager = False
    try:
        celery_app.tasks["annotations.tasks.build_snapshot_task"].delay(snap.pk)
    finally:
        celery_app.conf.task_always_eager = True
    jp.wait_for(_stage(snap, "writing"), timeout_s=BOUND_S, what="the build reached writing", log=log)
    jp.kill9(procs[0])
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.BUILDING
    procs.append(jp.start("worker", env=env, log=log))  # only the worker comes back
    ready = lambda: Snapshot.objects.filter(pk=snap.pk, status=SnapshotStatus.READY).exists()  # noqa: E731
    jp.wait_for(ready, timeout_s=BOUND_S, what="the restarted worker finished the snapshot", log=log)
    _assert_built_once(snap, sessions=4)


def test_snapshot_whose_command_is_killed_is_finished_by_a_worker(env, procs, tmp_path):
    _curated(4)
    log = tmp_path / "jobs.log"
    command = jp.start("make_snapshot", "--quiet", env={**env, "SLOW_JOB_SECONDS": "1.5"}, log=log)
    procs.append(command)
    jp.wait_for(
        lambda: Snapshot.objects.filter(progress_stage="writing").exists(),
        timeout_s=BOUND_S,
        what="make_snapshot reached writing",
        log=log,
    )
    jp.kill9(command)
    snap = Snapshot.objects.get()
    assert snap.status == SnapshotStatus.BUILDING and snap.worker.startswith("snapshot:")
    procs.append(jp.start("worker", env=env, log=log))
    ready = lambda: Snapshot.objects.filter(pk=snap.pk, status=SnapshotStatus.READY).exists()  # noqa: E731
    jp.wait_for(ready, timeout_s=BOUND_S, what="the worker finished the killed command's snapshot", log=log)
    _assert_built_once(snap, sessions=4)


def _sessions_once(run: GenerationRun, n: int) -> None:
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, (run.status, run.stop_reason)
    indexes = list(Session.objects.filter(run=run).order_by("run_index").values_list("run_index", flat=True))
    assert indexes == list(range(n))  # every slot once, none twice
    assert run.made + run.rejected_by_gate + len(run.errors) == n


def test_generation_whose_worker_is_killed_finishes_with_the_waiting_command(env, procs, tmp_path, demo_cohort):
    log = tmp_path / "jobs.log"
    slow = {**env, "SLOW_JOB_SECONDS": "1"}
    procs.append(jp.start("worker", env=slow, log=log))
    command = jp.start("generate", "--n", "6", "--seed", "41", "--quiet", "--wait-timeout", "15", env=env, log=log)
    procs.append(command)
    jp.wait_for(lambda: Session.objects.count() >= 2, timeout_s=BOUND_S, what="two slots made", log=log)
    jp.kill9(procs[0])  # the slot it was making (and the one it had prefetched) are lost with it
    procs.append(jp.start("worker", env=env, log=log))
    jp.wait_for(lambda: command.poll() is not None, timeout_s=BOUND_S, what="generate ended by itself", log=log)
    assert command.returncode == 0, log.read_text(errors="replace")[-4000:]
    _sessions_once(GenerationRun.objects.get(), 6)


def test_generation_whose_command_is_killed_is_finished_by_the_restarted_worker(env, procs, tmp_path, demo_cohort):
    log = tmp_path / "jobs.log"
    slow = {**env, "SLOW_JOB_SECONDS": "1"}
    procs.append(jp.start("worker", env=slow, log=log))
    command = jp.start("generate", "--n", "6", "--seed", "43", "--quiet", env=env, log=log)
    procs.append(command)
    jp.wait_for(lambda: Session.objects.count() >= 1, timeout_s=BOUND_S, what="a slot made", log=log)
    jp.kill9(command)
    jp.kill9(procs[0])  # and the worker with the slot it was making
    run = GenerationRun.objects.get()
    assert run.status == RunStatus.RUNNING and Session.objects.count() < 6
    procs.append(jp.start("worker", env=env, log=log))
    done = lambda: GenerationRun.objects.filter(pk=run.pk, status=RunStatus.FINISHED).exists()  # noqa: E731
    jp.wait_for(done, timeout_s=BOUND_S, what="the restarted worker finished the run", log=log)
    _sessions_once(run, 6)
