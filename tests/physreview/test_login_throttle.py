"""Login throttling: every login form, counted before the password is checked, per username and per IP.

Most tests run on the throttle's default cache (the database, shared by every server process); the window tests
use LocMemCache under a fake clock, since the database cache reads the real time.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connections
from django.test import Client
from django.urls import reverse

from core.cachedb import AtomicDatabaseCache
from physreview import throttle
from tests.databases import serves_concurrent_connections
from tests.physreview.startup import print_settings

LIMIT = 3
WINDOW = 600
REFUSED = "Too many failed login attempts"
LOGIN_URLS = ("/accounts/login/", "/admin/login/")


def cache():
    return caches["throttle"]


@pytest.fixture(autouse=True)
def _throttle(settings, db):
    settings.LOGIN_FAILURE_LIMIT = LIMIT
    settings.LOGIN_FAILURE_WINDOW_SECONDS = WINDOW
    cache().clear()
    yield
    cache().clear()


@pytest.fixture
def clock(settings, monkeypatch):
    """LocMemCache (its expiry reads time.time) and a clock the test moves."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle-tests"},
    }
    cache().clear()
    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    return now


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user(username="alice", password="correct-horse")


@pytest.fixture
def root(db):
    return get_user_model().objects.create_superuser(username="root", password="root-password")


def _login(client, username, password, ip="10.0.0.1", url="/accounts/login/"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=ip)


def _fail(client, n, username="alice", ip="10.0.0.1", url="/accounts/login/"):
    for _ in range(n):
        response = _login(client, username, "wrong", ip=ip, url=url)
        assert response.status_code == 200
        assert (
            "didn't match" in response.content.decode() or "correct username and password" in response.content.decode()
        )


def test_default_cache_is_the_database():
    assert isinstance(cache(), AtomicDatabaseCache)


def test_limit_failures_then_refusal_with_message(client, alice):
    _fail(client, LIMIT)
    response = _login(client, "alice", "correct-horse")
    assert response.status_code == 429
    body = response.content.decode()
    assert REFUSED in body and "10 minutes" in body
    assert 'name="username"' in body and 'value="alice"' in body  # the form is shown again
    assert int(response["Retry-After"]) == pytest.approx(WINDOW, abs=5)
    assert "_auth_user_id" not in client.session  # the right password did not log in


def test_admin_login_is_throttled(client, root):
    """12 wrong passwords for the superuser, then the right one: refused, not logged in."""
    _fail(client, LIMIT, username="root", url="/admin/login/")
    response = _login(client, "root", "root-password", url="/admin/login/")
    assert response.status_code == 429
    assert REFUSED in response.content.decode() and 'value="root"' in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_admin_login_still_logs_in_below_the_limit(client, root):
    _fail(client, LIMIT - 1, username="root", url="/admin/login/")
    response = _login(client, "root", "root-password", url="/admin/login/")
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(root.pk)


def test_one_counter_for_every_login_form(client, root):
    _fail(client, LIMIT - 1, username="root", url="/accounts/login/")
    _fail(client, 1, username="root", url="/admin/login/")
    for url in LOGIN_URLS:
        assert _login(client, "root", "root-password", url=url).status_code == 429


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
    # ... and the first address is refused for any username (the IP counter).
    assert _login(client, "bob", "bob-password", ip="10.0.0.1").status_code == 429
    # Another user from another address is not affected.
    assert _login(client, "bob", "bob-password", ip="10.0.0.8").status_code == 302


def test_one_ip_cannot_spray_many_usernames(client, db):
    for name in ("u1", "u2", "u3"):
        _fail(client, 1, username=name, ip="10.0.0.66")
    for name in ("u4", "u5", "u6"):
        assert _login(client, name, "wrong", ip="10.0.0.66").status_code == 429


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


def test_refusal_ends_when_the_window_passes(client, alice, clock):
    _fail(client, LIMIT)
    assert _login(client, "alice", "correct-horse").status_code == 429
    clock[0] += WINDOW - 30
    response = _login(client, "alice", "correct-horse")
    assert response.status_code == 429 and "1 minute." in response.content.decode()
    clock[0] += 31
    assert _login(client, "alice", "correct-horse").status_code == 302


def test_refused_attempts_do_not_extend_the_window(client, alice, clock):
    _fail(client, LIMIT)
    for _ in range(5):
        clock[0] += WINDOW // 6
        assert _login(client, "alice", "wrong").status_code == 429
    clock[0] += WINDOW // 6 + 1
    assert _login(client, "alice", "correct-horse").status_code == 302


def test_attempts_outside_the_window_start_a_new_count(client, alice, clock):
    _fail(client, LIMIT - 1)
    clock[0] += WINDOW + 1
    _fail(client, LIMIT - 1)  # the old failures no longer count
    assert _login(client, "alice", "correct-horse").status_code == 302


def test_counters_expire_with_the_window_in_the_cache(clock):
    throttle.register_attempt(username="carol", ip="10.1.1.1")
    key = throttle.counter_key(kind="user", value="carol")
    assert cache().get(f"{key}:count") == 1
    # LocMemCache keeps the expiry time per key; the counter expires with the window.
    expiry = cache()._expire_info[cache().make_and_validate_key(f"{key}:count")]
    assert expiry == pytest.approx(clock[0] + WINDOW, abs=1)


def test_refused_attempt_does_not_check_the_password(client, alice, monkeypatch):
    _fail(client, LIMIT)
    called = []
    monkeypatch.setattr("django.contrib.auth.forms.authenticate", lambda *a, **k: called.append(1))
    assert _login(client, "alice", "correct-horse").status_code == 429
    assert called == []


def test_login_page_get_is_not_throttled(client, alice):
    _fail(client, LIMIT)
    assert client.get(reverse("login"), REMOTE_ADDR="10.0.0.1").status_code == 200
    assert client.get("/admin/login/", REMOTE_ADDR="10.0.0.1").status_code == 200


def _in_threads(n, fn):
    """Run ``fn(i)`` in n threads released at once; each closes its own database connection."""
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait()
            return fn(i)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(run, range(n)))


@pytest.mark.django_db(transaction=True)
def test_simultaneous_wrong_passwords_cannot_pass_the_limit(monkeypatch):
    """30 wrong passwords at once (as from 30 server processes): only LIMIT reach the password check."""
    if not serves_concurrent_connections():
        pytest.skip("needs a database that serves several connections at once")
    get_user_model().objects.create_user(username="alice", password="correct-horse")
    from django.contrib.auth import forms

    checked, real = [], forms.authenticate

    def counting(*args, **kwargs):
        checked.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(forms, "authenticate", counting)
    statuses = _in_threads(30, lambda i: _login(Client(), "alice", "wrong", ip=f"10.2.0.{i}").status_code)
    assert len(checked) == LIMIT
    assert sorted(statuses) == [200] * LIMIT + [429] * (30 - LIMIT)


@pytest.mark.django_db(transaction=True)
def test_database_cache_incr_is_atomic():
    if not serves_concurrent_connections():
        pytest.skip("needs a database that serves several connections at once")
    cache().add("counter", 0, timeout=60)
    values = _in_threads(20, lambda i: cache().incr("counter"))
    assert sorted(values) == list(range(1, 21)) and cache().get("counter") == 20


def test_database_cache_incr_keeps_the_expiry_and_misses_expired_keys(db):
    cache().set("k", 5, timeout=60)
    assert cache().incr("k", 2) == 7 and cache().decr("k") == 6 and cache().get("k") == 6
    cache().set("gone", 1, timeout=-1)
    with pytest.raises(ValueError):
        cache().incr("gone")
    with pytest.raises(ValueError):
        cache().incr("never-set")


def _start(env, tmp_path):
    return print_settings(
        "s.LOGIN_FAILURE_LIMIT, s.LOGIN_FAILURE_WINDOW_SECONDS, s.CACHES['throttle']['BACKEND']",
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
        ("THROTTLE_CACHE_URL", "file:///tmp/x", "THROTTLE_CACHE_URL='file:///tmp/x' has scheme 'file'"),
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
    # The database cache by default: every server process counts on the same rows.
    assert result.stdout.split() == ["5", "900", "core.cachedb.AtomicDatabaseCache"]
    result = _start(
        {"LOGIN_FAILURE_LIMIT": "10", "LOGIN_FAILURE_WINDOW_SECONDS": "60", "CACHE_URL": "redis://127.0.0.1:6379/9"},
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["10", "60", "core.cacheredis.ReusedClientRedisCache"]
    result = _start({"THROTTLE_CACHE_URL": "locmem://"}, tmp_path)
    assert result.stdout.split()[2] == "django.core.cache.backends.locmem.LocMemCache"
