"""Token auth, the api_token command, one error body for every error, the schema and the docs page."""

from __future__ import annotations

import io
import re

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _token(username: str, *args: str) -> str:
    out = io.StringIO()
    call_command("api_token", username, *args, stdout=out)
    return out.getvalue().strip()


def test_api_token_command_creates_prints_and_resets(world):
    key = _token("rev1")
    assert re.fullmatch(r"[0-9a-f]{40}", key)
    assert _token("rev1") == key  # printed again, not replaced
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/sessions/").status_code == 200
    new = _token("rev1", "--reset")
    assert new != key and Token.objects.get(user=world["users"]["rev1"]).key == new
    revoked = client.get("/api/sessions/")
    assert revoked.status_code == 401
    assert revoked.json() == {"error": {"code": "authentication_failed", "message": "Invalid token."}}


def test_api_token_command_refuses_unknown_or_inactive_users(world):
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        _token("ghost")
    get_user_model().objects.filter(username="rev3").update(is_active=False)
    with pytest.raises(CommandError, match="inactive"):
        _token("rev3")
    assert not Token.objects.exists()


@pytest.mark.parametrize(
    ("method", "url", "status", "code"),
    [
        ("get", "/api/no-such-thing/", 404, "not_found"),
        ("post", "/api/no-such-thing/", 404, "not_found"),
        ("get", "/api/turns/999999999/", 404, "not_found"),
        ("delete", "/api/turns/", 405, "method_not_allowed"),
        ("put", "/api/sessions/", 405, "method_not_allowed"),
        ("get", "/api/turns/1/approve/", 405, "method_not_allowed"),
    ],
)
def test_error_bodies_have_one_shape(clients, method, url, status, code):
    response = getattr(clients["adj"], method)(url)
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code and body["error"]["message"]


def test_malformed_json_is_a_400_parse_error(clients, world):
    turn = world["a"].turns.get(index=0)
    response = clients["rev1"].post(f"/api/turns/{turn.pk}/approve/", "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "parse_error"
    form = clients["rev1"].post(f"/api/turns/{turn.pk}/approve/", {"base_version": 1})  # multipart
    assert form.status_code == 415 and form.json()["error"]["code"] == "unsupported_media_type"


def test_schema_and_offline_docs(client, db):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    spec = yaml.safe_load(schema.content)
    assert spec["openapi"].startswith("3.")
    assert {"/api/sessions/", "/api/turns/{id}/edit/", "/api/snapshots/{label}/files/{name}/"} <= set(spec["paths"])
    assert set(spec["components"]["securitySchemes"]) == {"tokenAuth", "cookieAuth"}
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    # Assets come from our static files (drf-spectacular-sidecar), never from a CDN or font service.
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) >= 3 and all(a.startswith("/static/") for a in assets), assets
    assert "https://" not in html and "http://" not in html.replace("http://testserver", "")
    for asset in assets:
        assert client.get(asset).status_code == 200, asset


def test_browsable_api_for_a_logged_in_browser(client, world):
    """Session auth: the browsable pages render (their forms included) for each endpoint kind."""
    client.force_login(world["users"]["adj"])
    turn = world["a"].turns.get(index=0)
    for url in ("/api/", "/api/sessions/", f"/api/sessions/{world['a'].pk}/", "/api/turns/", f"/api/turns/{turn.pk}/"):
        page = client.get(url, HTTP_ACCEPT="text/html")
        assert page.status_code == 200, url
        assert "text/html" in page["Content-Type"]
    refused = client.get("/api/snapshots/v1/", HTTP_ACCEPT="text/html")
    assert refused.status_code == 404


# Issue 36 (info row): API tokens survived a password change.
def test_password_change_revokes_api_tokens(world):
    from tests.annotations.api.conftest import token_client

    user = world["users"]["rev1"]
    client = token_client(user)
    assert client.get("/api/turns/").status_code == 200
    user.set_password("a-new-password-1")
    user.save()
    assert not Token.objects.filter(user=user).exists()
    assert client.get("/api/turns/").status_code == 401
    assert token_client(user).get("/api/turns/").status_code == 200  # a new token works


def test_other_saves_and_logins_keep_the_token(world, client):
    user = world["users"]["rev1"]
    user.set_password("pw-rev1-secret")
    user.save()
    key = Token.objects.create(user=user).key
    user.first_name = "Ada"
    user.save()
    assert client.post("/accounts/login/", {"username": "rev1", "password": "pw-rev1-secret"}).status_code == 302
    assert Token.objects.get(user=user).key == key
