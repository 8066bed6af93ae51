"""The admin path: Create snapshot form → Celery task (in-process here) → progress, files, card, downloads."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotations.models import Snapshot, SnapshotStatus
from annotations.snapshots import selectors, services
from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):
    user = make_user("root", "admin")
    user.is_staff = user.is_superuser = True
    user.save()
    return user


def test_create_through_the_admin_then_download(client, staff, curated, django_capture_on_commit_callbacks):
    client.force_login(staff)
    page = client.get(reverse("admin:annotations_snapshot_changelist"))
    assert reverse("admin:annotations_snapshot_create") in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:  # the task is dispatched after commit
        response = client.post(
            reverse("admin:annotations_snapshot_create"), {"language": "both", "ehr_provenance": "synthetic"}
        )
    assert len(callbacks) == 1
    snap = Snapshot.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "admin:annotations_snapshot_change", args=[snap.pk]
    )
    assert snap.status == SnapshotStatus.READY and snap.created_by == staff
    html = client.get(response["Location"]).content.decode()
    assert 'data-status="ready"' in html and "hx-trigger" not in html  # done: no polling
    assert 'id="snapshot-card"' in html
    assert "<h1>PhysReview curated set v1</h1>" in html  # the card rendered from Markdown, not raw text
    for entry in snap.manifest["files"]:
        url = reverse("snapshots:download", kwargs={"label": "v1", "name": entry["name"]})
        assert url in html
        download = client.get(url)
        assert download.status_code == 200
        assert (
            b"".join(download.streaming_content)
            == selectors.snapshot_file_path(snapshot=snap, name=entry["name"]).read_bytes()
        )
        assert f'filename="v1_{entry["name"]}"' in download["Content-Disposition"]
    assert client.get(reverse("snapshots:download", kwargs={"label": "v1", "name": "x.jsonl"})).status_code == 404
    assert client.get(reverse("snapshots:download", kwargs={"label": "v5", "name": "turns.jsonl"})).status_code == 404


def test_admin_and_command_give_identical_files(client, staff, curated, django_capture_on_commit_callbacks):
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:annotations_snapshot_create"), {"language": "both", "ehr_provenance": "undeclared"})
    call_command("make_snapshot", "--quiet", "--force", stdout=StringIO())  # same content: forced
    v1, v2 = Snapshot.objects.order_by("version")
    assert (v1.label, v2.label) == ("v1", "v2")
    assert v1.manifest["files"] == v2.manifest["files"] and v1.content_sha256 == v2.content_sha256
    for name in selectors.file_names(snapshot=v1):
        assert (
            selectors.snapshot_file_path(snapshot=v1, name=name).read_bytes()
            == selectors.snapshot_file_path(snapshot=v2, name=name).read_bytes()
        )


def test_empty_selection_is_shown_on_the_form(client, staff, curated):
    client.force_login(staff)
    response = client.post(
        reverse("admin:annotations_snapshot_create"), {"tiers": ["3"], "language": "both", "ehr_provenance": "mimic"}
    )
    assert response.status_code == 200
    assert "no session has all its turns approved" in response.content.decode()
    assert not Snapshot.objects.exists()


def test_progress_is_polled_while_building(client, staff, curated):
    client.force_login(staff)
    snap = services.start_snapshot(user=staff)
    url = reverse("admin:annotations_snapshot_progress", args=[snap.pk])
    building = client.get(url, headers={"HX-Request": "true"})
    assert 'hx-trigger="every 1s"' in building.content.decode() and "HX-Refresh" not in building
    change = client.get(reverse("admin:annotations_snapshot_change", args=[snap.pk])).content.decode()
    assert f'hx-get="{url}"' in change and "htmx.min.js" in change
    services.build_snapshot(snapshot_id=snap.pk)
    done = client.get(url, headers={"HX-Request": "true"})
    assert 'data-status="ready"' in done.content.decode() and done["HX-Refresh"] == "true"


def test_snapshots_are_read_only_in_the_admin(client, staff, curated):
    client.force_login(staff)
    snap = services.create_snapshot(user=staff)
    assert client.get(reverse("admin:annotations_snapshot_add")).status_code == 403
    assert client.post(reverse("admin:annotations_snapshot_delete", args=[snap.pk])).status_code == 403
    page = client.get(reverse("admin:annotations_snapshot_change", args=[snap.pk])).content.decode()
    assert 'name="_save"' not in page


def test_non_staff_cannot_download_or_create(client, curated, people):
    services.create_snapshot(user=people["boss"])
    url = reverse("snapshots:download", kwargs={"label": "v1", "name": "turns.jsonl"})
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(people["rev1"])
    assert client.get(url).status_code == 403
    staff_reviewer = people["rev2"]
    staff_reviewer.is_staff = True
    staff_reviewer.save()
    client.force_login(staff_reviewer)
    assert client.post(reverse("admin:annotations_snapshot_create"), {"language": "both"}).status_code == 403
