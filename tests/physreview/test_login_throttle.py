"""Login throttling: N failures per username or per client IP within the window, then refusal."""

import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse

from physreview import throttle
from tests.physreview.startup import print_settings

LIMIT = 3
WINDOW = 600
REFUSED = "Too many failed login attempts"


@pytest.fixture(autouse=True)
def _throttle(settings):
    # An in-memory cache of its own, whatever CACHE_URL says (one test reads LocMemCache's expiry times).
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle-tests"}
    }
    settings.LOGIN_FAILURE_LIMIT = LIMIT
    settings.LOGIN_FAILURE_WINDOW_SECONDS = WINDOW
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user(username="alice", password="correct-horse")


def _login(client, username, password, ip="10.0.0.1"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


def _fail(client, n, username="alice", ip="10.0.0.1"):
    for _ in range(n):
        response = _login(client, username, "wrong", ip=ip)
        assert response.status_code == 200
        assert "didn't match" in response.content.decode()


def test_limit_failures_then_refusal_with_message(client, alice):
    _fail(client, LIMIT)
    response = _login(client, "alice", "correct-horse")
    assert response.status_code == 429
    body = response.content.decode()
    assert REFUSED in body and "10 minutes" in body
    assert 'name="username"' in body and 'value="alice"' in body  # the form is shown again
    assert int(response["Retry-After"]) == pytest.approx(WINDOW, abs=5)
    assert "_auth_user_id" not in client.session  # the right password did not log in


def test_below_limit_still_logs_in(client, alice):
    _fail(client, LIMIT - 1)
    response = _login(client, "alice", "correct-horse")
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_counter_is_per_username(client, alice):
    get_user_model().objects.create_user(username="bob", password="bob-password")
    _fail(client, LIMIT, username="alice", ip="10.0.0.1")
    # The same username from another address is refused (the username counter) ...
    assert _login(client, "alice", "correct-horse", ip="10.9.9.9").status_code == 429
    # ... while another user from another address is not, and the username is matched case-insensitively.
    assert _login(client, "bob", "bob-password", ip="10.9.9.9").status_code == 302
    assert _login(client, "ALICE ", "x", ip="10.8.8.8").status_code == 429


def test_counter_is_per_ip(client, alice):
    for name in ("u1", "u2", "u3")[:LIMIT]:
        _fail(client, 1, username=name, ip="10.0.0.7")
    # Every username is refused from that address, even with the right password ...
    assert _login(client, "alice", "correct-horse", ip="10.0.0.7").status_code == 429
    # ... and is let in from another address.
    assert _login(client, "alice", "correct-horse", ip="10.0.0.8").status_code == 302


def test_success_resets_the_username_counter(client, alice):
    _fail(client, LIMIT - 1, ip="10.0.0.1")
    assert _login(client, "alice", "correct-horse", ip="10.0.0.2").status_code == 302
    client.logout()
    # A fresh run of LIMIT - 1 failures (from a third address) is allowed again.
    _fail(client, LIMIT - 1, ip="10.0.0.3")
    assert _login(client, "alice", "correct-horse", ip="10.0.0.3").status_code == 302


def test_success_does_not_reset_the_ip_counter(client, alice):
    _fail(client, LIMIT - 1, username="mallory", ip="10.0.0.5")
    assert _login(client, "alice", "correct-horse", ip="10.0.0.5").status_code == 302
    client.logout()
    _fail(client, 1, username="mallory2", ip="10.0.0.5")
    assert _login(client, "alice", "correct-horse", ip="10.0.0.5").status_code == 429


def _age_window(seconds):
    """Move the start of every counter's window back in time (instead of sleeping)."""
    for kind, value in (("user", "alice"), ("ip", "10.0.0.1")):
        key = throttle.counter_key(kind=kind, value=value)
        cache.set(f"{key}:since", cache.get(f"{key}:since") - seconds, timeout=WINDOW)


def test_refusal_ends_when_the_window_passes(client, alice):
    _fail(client, LIMIT)
    assert _login(client, "alice", "correct-horse").status_code == 429
    _age_window(WINDOW - 30)
    response = _login(client, "alice", "correct-horse")
    assert response.status_code == 429 and "1 minute." in response.content.decode()
    _age_window(31)
    assert _login(client, "alice", "correct-horse").status_code == 302


def test_failures_outside_the_window_start_a_new_count(client, alice):
    _fail(client, LIMIT - 1)
    _age_window(WINDOW + 1)
    _fail(client, LIMIT - 1)  # the old failures no longer count
    assert _login(client, "alice", "correct-horse").status_code == 302


def test_counters_expire_with_the_window_in_the_cache():
    now = time.time()
    throttle.register_failure(username="carol", ip="10.1.1.1", now=now)
    key = throttle.counter_key(kind="user", value="carol")
    assert cache.get(f"{key}:count") == 1
    # LocMemCache keeps the expiry time per key; both keys expire with the window.
    expiry = cache._expire_info[cache.make_and_validate_key(f"{key}:count")]
    assert expiry == pytest.approx(now + WINDOW, abs=5)


def test_refused_attempt_does_not_check_the_password(client, alice, monkeypatch):
    _fail(client, LIMIT)
    called = []
    monkeypatch.setattr("django.contrib.auth.forms.authenticate", lambda *a, **k: called.append(1))
    assert _login(client, "alice", "correct-horse").status_code == 429
    assert called == []


def test_login_page_get_is_not_throttled(client, alice):
    _fail(client, LIMIT)
    assert client.get(reverse("login"), REMOTE_ADDR="10.0.0.1").status_code == 200


def _start(env, tmp_path):
    return print_settings(
        "s.LOGIN_FAILURE_LIMIT, s.LOGIN_FAILURE_WINDOW_SECONDS, s.CACHES['default']['BACKEND']",
        env=env,
        var_dir=tmp_path,
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("LOGIN_FAILURE_LIMIT", "five", "LOGIN_FAILURE_LIMIT='five' is not an integer"),
        ("LOGIN_FAILURE_LIMIT", "0", "LOGIN_FAILURE_LIMIT='0' must be at least 1"),
        ("LOGIN_FAILURE_LIMIT", "5.0", "LOGIN_FAILURE_LIMIT='5.0' is not an integer"),
        ("LOGIN_FAILURE_WINDOW_SECONDS", "15m", "LOGIN_FAILURE_WINDOW_SECONDS='15m' is not an integer"),
        ("LOGIN_FAILURE_WINDOW_SECONDS", "-1", "LOGIN_FAILURE_WINDOW_SECONDS='-1' must be at least 1"),
        ("CACHE_URL", "memcached://127.0.0.1:11211", "CACHE_URL='memcached://127.0.0.1:11211' has scheme 'memcached'"),
    ],
)
def test_bad_throttle_environment_fails_at_start_with_its_name(name, value, expected, tmp_path):
    result = _start({name: value}, tmp_path)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert expected in result.stderr


def test_throttle_environment_defaults_and_values(tmp_path):
    result = _start({}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["5", "900", "django.core.cache.backends.locmem.LocMemCache"]
    result = _start(
        {"LOGIN_FAILURE_LIMIT": "10", "LOGIN_FAILURE_WINDOW_SECONDS": "60", "CACHE_URL": "redis://127.0.0.1:6379/9"},
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["10", "60", "django.core.cache.backends.redis.RedisCache"]
