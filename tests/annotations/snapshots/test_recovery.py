"""Issue 36, F4: a snapshot build whose process died (``kill -9`` of its worker or of ``make_snapshot``) stayed
``building`` forever and only ``make_snapshot --resume`` by hand finished it; the admin and the API had no resume.

Here a dead build is the row as such a process leaves it: ``building``, held by a worker token whose heartbeat
is old, maybe with a half-written temporary folder. The sweeps (the worker's and the command's), the admin and
the API must resume it, leave a live build alone and never let two processes finish one build.
(The processes killed for real: tests/physreview/test_job_faults.py.)
"""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotations.models import Snapshot, SnapshotStatus
from annotations.snapshots import recovery, services
from annotations.snapshots.errors import BuildInProgress
from annotations.snapshots.selectors import snapshot_dir, snapshots_root
from core.jobs import LeaseLost
from physreview.jobs import sweep_stale_jobs
from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


def _dead_build(people, *, minutes_ago: float = 10, resumes: int = 0) -> Snapshot:
    """A build whose process was killed while writing: an old heartbeat, a temporary folder left behind."""
    snap = services.start_snapshot(user=people["boss"])
    Snapshot.objects.filter(pk=snap.pk).update(
        worker="snapshot:gone:4242:dead",
        heartbeat_at=timezone.now() - dt.timedelta(minutes=minutes_ago),
        progress_stage="writing",
        resumes=resumes,
    )
    snapshots_root().mkdir(parents=True, exist_ok=True)
    half = snapshots_root() / f".{snap.label}.killed"
    half.mkdir()
    (half / "turns.jsonl").write_text('{"half": ', encoding="utf-8")
    snap.refresh_from_db()
    return snap


def _assert_ready_and_clean(snap: Snapshot) -> None:
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.READY, snap.error
    assert (snapshot_dir(snapshot=snap) / "SHA256SUMS").exists()
    assert not list(snapshots_root().glob(f".{snap.label}.*"))  # the half-written folder is gone
    assert snap.worker == ""


def test_the_sweep_resumes_a_build_whose_process_died(curated, people, settings):
    settings.JOB_STALE_SECONDS = 60
    snap = _dead_build(people)
    lines = sweep_stale_jobs()
    assert lines == [f"snapshot v1 resumed (no heartbeat since {snap.heartbeat_at:%H:%M:%S})"]
    _assert_ready_and_clean(snap)
    assert snap.resumes == 1 and Snapshot.objects.count() == 1
    assert sweep_stale_jobs() == []  # nothing left to do, nothing done twice


def test_make_snapshot_resumes_a_dead_build_before_its_own(curated, people, settings):
    settings.JOB_STALE_SECONDS = 60
    snap = _dead_build(people)
    out, err = StringIO(), StringIO()
    call_command("make_snapshot", "--language", "en", "--quiet", stdout=out, stderr=err)
    assert "stale snapshot v1 resumed" in err.getvalue()
    _assert_ready_and_clean(snap)
    assert out.getvalue().startswith("v2\n")


def test_a_build_that_never_started_is_dispatched_again(curated, people, settings):
    settings.JOB_STALE_SECONDS = 60
    snap = services.start_snapshot(user=people["boss"])  # its task's message was lost: no heartbeat ever
    Snapshot.objects.filter(pk=snap.pk).update(created=timezone.now() - dt.timedelta(minutes=5))
    assert [line.split(" (")[0] for line in sweep_stale_jobs()] == ["snapshot v1 resumed"]
    _assert_ready_and_clean(snap)


def test_a_live_build_is_left_alone(curated, people, settings):
    settings.JOB_STALE_SECONDS = 60
    snap = _dead_build(people, minutes_ago=0.2)  # heartbeat 12 s ago: its process lives
    assert sweep_stale_jobs() == []
    with pytest.raises(BuildInProgress, match="being built by snapshot:gone:4242:dead"):
        services.build_snapshot(snapshot_id=snap.pk)
    with pytest.raises(CommandError, match="being built"):
        call_command("make_snapshot", "--resume", "v1", "--quiet")
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.BUILDING and snap.worker == "snapshot:gone:4242:dead"


def test_a_build_that_keeps_dying_is_failed_with_the_reason(curated, people, settings):
    settings.JOB_STALE_SECONDS, settings.JOB_MAX_AUTO_RESUMES = 60, 2
    snap = _dead_build(people, resumes=2)
    [line] = sweep_stale_jobs()
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.FAILED and snap.worker == ""
    assert "after 2 automatic resumes" in snap.error and "resume it from the admin" in snap.error
    assert line.startswith("snapshot v1 failed")


def test_a_build_taken_over_stops_without_writing(curated, people):
    snap = services.start_snapshot(user=people["boss"])

    def taken_over(stage, done, total):
        if stage == "writing":  # a sweep decided this process was dead and gave the build to another
            Snapshot.objects.filter(pk=snap.pk).update(worker="snapshot:other:1:x")

    with pytest.raises(LeaseLost):
        services.build_snapshot(snapshot_id=snap.pk, progress=taken_over)
    snap.refresh_from_db()
    assert snap.status == SnapshotStatus.BUILDING and snap.worker == "snapshot:other:1:x"  # not failed, not ready
    assert not snapshot_dir(snapshot=snap).exists() and not list(snapshots_root().glob(".v1.*"))


# --- a person's resume: API and admin ----------------------------------------------------------------------


def _failed(people) -> Snapshot:
    snap = services.start_snapshot(user=people["boss"])
    Snapshot.objects.filter(pk=snap.pk).update(status=SnapshotStatus.FAILED, error="OSError: disk full")
    snap.refresh_from_db()
    return snap


def test_api_resume_of_a_failed_build(client, curated, people, django_capture_on_commit_callbacks):
    snap = _failed(people)
    url = reverse("api:snapshot-resume", kwargs={"label": "v1"})
    client.force_login(people["rev1"])
    assert client.post(url).status_code == 403  # reviewers may not
    client.force_login(make_user("adj", "adjudicator"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    # Queued in the request (built after commit: here when the block ends, in-process without a broker).
    assert response.status_code == 202 and response.json()["status"] == "building"
    _assert_ready_and_clean(snap)
    again = client.post(url)
    assert again.status_code == 409 and again.json()["error"]["code"] == "snapshot_ready"


def test_api_refuses_to_resume_a_live_build(client, curated, people):
    _dead_build(people, minutes_ago=0)
    client.force_login(people["boss"])
    response = client.post(reverse("api:snapshot-resume", kwargs={"label": "v1"}))
    assert response.status_code == 409 and response.json()["error"]["code"] == "build_in_progress"
    assert Snapshot.objects.get().worker == "snapshot:gone:4242:dead"


@pytest.fixture
def staff(db):
    user = make_user("root", "admin")
    user.is_staff = user.is_superuser = True
    user.save()
    return user


def test_admin_resume_button_and_view(client, curated, people, staff, django_capture_on_commit_callbacks):
    snap = _failed(people)
    url = reverse("admin:annotations_snapshot_resume", args=[snap.pk])
    staff_reviewer = people["rev2"]
    staff_reviewer.is_staff = True
    staff_reviewer.save()
    client.force_login(staff_reviewer)
    assert client.post(url).status_code == 403  # staff, but not an admin of the review
    client.force_login(staff)
    page = client.get(reverse("admin:annotations_snapshot_change", args=[snap.pk])).content.decode()
    assert f'formaction="{url}"' in page and "This build failed." in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    assert response.status_code == 302
    _assert_ready_and_clean(snap)
    page = client.get(reverse("admin:annotations_snapshot_change", args=[snap.pk])).content.decode()
    assert 'id="snapshot-resume"' not in page


def test_resumable_lists_failed_and_stale_builds_only(curated, people, settings):
    settings.JOB_STALE_SECONDS = 60
    failed = _failed(people)
    assert recovery.resumable_ids() == {failed.pk}
