"""ServerTimingMiddleware: ``Server-Timing: app;dur=<ms>, cpu;dur=<ms>`` on every response (time inside Django)."""

import re
import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.http import HttpResponse
from django.test import RequestFactory

from physreview.middleware import ServerTimingMiddleware

METRICS = re.compile(r"(?:^|, )app;dur=(\d+\.\d), cpu;dur=(\d+\.\d)$")


def _timings(response) -> tuple[float, float]:
    match = METRICS.search(response["Server-Timing"])
    assert match, response["Server-Timing"]
    return float(match.group(1)), float(match.group(2))


def test_is_the_outermost_middleware():
    assert settings.MIDDLEWARE[0] == "physreview.middleware.ServerTimingMiddleware"


def test_duration_covers_the_wrapped_layers():
    def slow_view(request):
        time.sleep(0.03)
        return HttpResponse("ok")

    response = ServerTimingMiddleware(slow_view)(RequestFactory().get("/"))
    wall, cpu = _timings(response)
    assert 30 <= wall < 1000
    assert cpu < 25  # sleeping is not CPU time


def test_cpu_time_counts_work_done():
    def busy_view(request):
        deadline = time.thread_time() + 0.03
        while time.thread_time() < deadline:
            pass
        return HttpResponse("ok")

    wall, cpu = _timings(ServerTimingMiddleware(busy_view)(RequestFactory().get("/")))
    assert 30 <= cpu <= wall + 1


def test_keeps_metrics_set_by_inner_layers():
    def view(request):
        response = HttpResponse("ok")
        response["Server-Timing"] = 'db;dur=1.5;desc="queries"'
        return response

    response = ServerTimingMiddleware(view)(RequestFactory().get("/"))
    assert response["Server-Timing"].startswith('db;dur=1.5;desc="queries", app;dur=')
    _timings(response)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "logged_in", "status"),
    [
        ("/review/", False, 302),  # login redirect
        ("/accounts/login/", False, 200),
        ("/review/", True, 200),
        ("/review/turns/999999/", True, 404),
        ("/static/css/app.css", False, 200),  # served by WhiteNoise, which answers before the view layer
    ],
)
def test_every_response_through_the_stack_has_the_header(client, path, logged_in, status):
    if logged_in:
        user = get_user_model().objects.create_user(username="timed", password="x")
        user.groups.add(Group.objects.get_or_create(name="reviewer")[0])  # a role: the review pages open
        client.force_login(user)
    response = client.get(path)
    assert response.status_code == status
    wall, cpu = _timings(response)
    assert wall >= 0 and cpu >= 0


def test_pages_name_their_icon_so_browsers_do_not_ask_for_favicon_ico(client):
    """Every page asked for /favicon.ico and got a 404 (issue 35): the pages name the project's own icon."""
    from django.contrib.staticfiles import finders

    html = client.get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html
    assert finders.find("favicon.svg")


# Issue 36 (info row): pages with patient data had no Cache-Control: no-store.
@pytest.mark.parametrize("path", ["/ehr/patients/", "/results/", "/review/", "/review/done/"])
def test_signed_in_pages_are_not_stored(client, db, path):
    user = get_user_model().objects.create_user(username="nostore", password="x-password-1")
    user.groups.add(Group.objects.get_or_create(name="adjudicator")[0])
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200, path
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]


def test_api_answers_are_not_stored(client, db):
    from rest_framework.authtoken.models import Token

    user = get_user_model().objects.create_user(username="apinostore", password="x-password-1")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    token = Token.objects.create(user=user)
    response = client.get("/api/turns/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    assert "no-store" in client.get("/api/turns/")["Cache-Control"]  # the 401 too


def test_anonymous_pages_outside_the_api_keep_their_headers(rf):
    from django.contrib.auth.models import AnonymousUser

    from physreview.middleware import NoStoreMiddleware

    request = rf.get("/static/favicon.svg")
    request.user = AnonymousUser()
    assert "Cache-Control" not in NoStoreMiddleware(lambda r: HttpResponse("x"))(request)
    request.user = get_user_model()(username="someone")  # not saved: is_authenticated is True all the same
    assert "no-store" in NoStoreMiddleware(lambda r: HttpResponse("x"))(request)["Cache-Control"]
