"""Error pages (styled, with navigation, DEBUG off) and each role's start page after login."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


def test_404_is_styled_with_navigation(client, settings):
    settings.DEBUG = False
    client.force_login(make_user("lost", "reviewer"))
    response = client.get("/review/no-such-page/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "Page not found" in html and "css/app.css" in html
    assert 'href="/review/"' in html and "Go to your start page" in html  # the nav and a way back


def test_404_in_chinese(client, settings):
    settings.DEBUG = False
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert 'lang="zh-hans"' in response.content.decode()


def test_403_has_navigation(client, settings):
    settings.DEBUG = False
    client.force_login(get_user_model().objects.create_user(username="nobody", password="x"))
    response = client.get("/review/")  # a user with no role
    html = response.content.decode()
    assert response.status_code == 403
    assert "Not allowed" in html and "no role in PhysReview" in html and "Go to your start page" in html


def test_500_is_self_contained_and_styled(settings, monkeypatch):
    """The 500 page renders without a request context (handler500): no user, nav or DB needed."""
    settings.DEBUG = False

    def boom(user):
        raise RuntimeError("the database is gone")

    monkeypatch.setattr("annotations.views.start.start_page_for", boom)
    client = Client(raise_request_exception=False)
    client.force_login(make_user("unlucky", "reviewer"))
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 500
    assert "Server error" in html and "css/app.css" in html and 'href="/"' in html
    assert "the database is gone" not in html and "Traceback" not in html


@pytest.mark.parametrize(
    ("role", "landing"),
    [
        ("reviewer", "/review/"),
        ("adjudicator", "/review/#adjudication-queue"),
        ("admin", "/review/dashboard/"),
    ],
)
def test_login_lands_on_the_role_start_page(client, role, landing):
    make_user("someone", role)
    response = client.post("/accounts/login/", {"username": "someone", "password": "x"}, follow=True)
    assert response.redirect_chain[0] == ("/", 302)
    assert response.redirect_chain[-1][0] == landing


def test_superuser_lands_on_the_dashboard(client):
    get_user_model().objects.create_superuser(username="root", password="x")
    response = client.post("/accounts/login/", {"username": "root", "password": "x"})
    assert client.get(response["Location"])["Location"] == "/review/dashboard/"


def test_user_without_role_is_told_so_not_sent_to_patients(client):
    get_user_model().objects.create_user(username="nobody", password="x")
    response = client.post("/accounts/login/", {"username": "nobody", "password": "x"}, follow=True)
    html = response.content.decode()
    assert response.status_code == 200 and response.redirect_chain == [("/", 302)]
    assert 'id="no-role"' in html and "no role in PhysReview" in html
    assert "/ehr/patients/" not in response.redirect_chain[-1][0]


def test_next_parameter_still_wins(client):
    make_user("rev", "reviewer")
    response = client.post("/accounts/login/?next=/results/", {"username": "rev", "password": "x"})
    assert response["Location"] == "/results/"


def test_anonymous_home_goes_to_login(client):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
