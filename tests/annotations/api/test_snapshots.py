"""Snapshots through the API: who may, creation, detail, file downloads (same bytes as the service)."""

from __future__ import annotations

import hashlib

import pytest

from annotations.models import Snapshot
from annotations.snapshots import services as snapshot_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("var_dir")]


def _create(client, capture, **body):
    # The build task runs on commit (in-process without a broker): run those callbacks here.
    with capture(execute=True):
        return client.post("/api/snapshots/", body, format="json")


def _download(client, url: str) -> bytes:
    response = client.get(url)
    assert response.status_code == 200, url
    assert response["Content-Disposition"].startswith("attachment")
    return b"".join(response.streaming_content)


def test_only_adjudicators_and_admins(clients, approved):
    assert clients["anon"].get("/api/snapshots/").status_code == 401
    for name in ("rev1", "rev3"):
        refused = clients[name].get("/api/snapshots/")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "permission_denied"
        assert clients[name].post("/api/snapshots/", {}, format="json").status_code == 403
    assert not Snapshot.objects.exists()
    assert clients["adj"].get("/api/snapshots/").json()["count"] == 0
    assert clients["admin"].get("/api/snapshots/").status_code == 200


def test_api_snapshot_equals_service_snapshot(clients, approved, world, django_capture_on_commit_callbacks):
    response = _create(clients["adj"], django_capture_on_commit_callbacks, scenarios=["med_safety"])
    assert response.status_code == 201, response.json()
    assert (response.json()["label"], response.json()["created_by"]) == ("v1", "adj")
    assert response["Location"].endswith("/api/snapshots/v1/")
    body = clients["adj"].get(response["Location"]).json()  # built by the task once the request committed
    assert body["status"] == "ready"
    assert body["filters"]["scenarios"] == ["med_safety"] and body["card_markdown"].strip()
    assert body["manifest"]["files"] and body["progress"]["stage"] == "done"

    by_service = snapshot_services.create_snapshot(user=world["users"]["admin"], scenarios=["med_safety"], force=True)
    assert by_service.version == 2
    assert [(f["name"], f["sha256"], f["bytes"]) for f in body["files"]] == [
        (f["name"], f["sha256"], f["bytes"]) for f in by_service.manifest["files"]
    ]
    assert body["content_sha256"] == by_service.content_sha256
    # Every downloaded file has the manifest's checksum.
    for entry in body["files"]:
        data = _download(clients["adj"], entry["url"])
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["bytes"]
    sums = _download(clients["admin"], "/api/snapshots/v1/files/SHA256SUMS/").decode()
    assert sums == snapshot_services.sha256sums(body["files"])


def test_detail_latest_and_not_found(clients, approved, django_capture_on_commit_callbacks):
    _create(clients["admin"], django_capture_on_commit_callbacks)
    _create(clients["admin"], django_capture_on_commit_callbacks, languages=["en"])
    listed = clients["adj"].get("/api/snapshots/").json()
    assert [s["label"] for s in listed["results"]] == ["v2", "v1"]
    assert clients["adj"].get("/api/snapshots/", {"status": "ready"}).json()["count"] == 2
    latest = clients["adj"].get("/api/snapshots/latest/").json()
    assert latest["label"] == "v2" and latest["filters"]["languages"] == ["en"]
    assert "card_markdown" in latest and "card_markdown" not in listed["results"][0]
    card = _download(clients["adj"], "/api/snapshots/v1/files/card.md/").decode()
    assert card == clients["adj"].get("/api/snapshots/v1/").json()["card_markdown"]
    for url in ("/api/snapshots/v9/", "/api/snapshots/v1/files/secret.txt/", "/api/snapshots/v1/files/..%2F..%2Fx/"):
        missing = clients["adj"].get(url)
        assert missing.status_code == 404, url
        assert missing.json()["error"]["code"] == "not_found"


def test_bad_or_empty_selection_is_400(clients, world, django_capture_on_commit_callbacks):
    empty = _create(clients["admin"], django_capture_on_commit_callbacks)
    assert empty.status_code == 400
    assert "no session has all its turns approved" in empty.json()["error"]["message"]
    bad = _create(clients["admin"], django_capture_on_commit_callbacks, tiers=[4], languages=["fr"])
    assert bad.status_code == 400
    assert set(bad.json()["error"]["fields"]) == {"tiers", "languages"}
    assert not Snapshot.objects.exists()
