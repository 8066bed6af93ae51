"""Shared steps of the review e2e tests: users with a password, logging in through the login page."""

from __future__ import annotations

from tests.annotations.conftest import make_user

PASSWORD = "pw-e2e-review-123456"


def user_with_password(username: str, role: str):
    user = make_user(username, role)
    user.set_password(PASSWORD)
    user.save()
    return user


def login(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    assert "/accounts/login/" not in page.url, f"login of {username} failed"
