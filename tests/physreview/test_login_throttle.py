"""Login throttling (physreview.throttle): failures per normalised username and per client address, delays
that grow instead of locks, device cookies for known browsers.

Cases: the original throttle tests (issue 9) and issue 36's findings F1 (a fullwidth username got a fresh
counter) and F2 (24 correct logins from one address refused; any client could lock a named account for 785 s).
Most tests run on the throttle's default cache (the database, shared by every server process); the delay tests
use LocMemCache under a fake clock, since the database cache reads the real time.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connections
from django.test import Client, RequestFactory
from django.urls import reverse

from core.cachedb import AtomicDatabaseCache
from physreview import throttle
from tests.databases import serves_concurrent_connections
from tests.physreview.startup import print_settings

LIMIT = 3
ADDRESS_LIMIT = 8
WINDOW = 600
MAX_DELAY = 60
REAL_DELAY = throttle.delay_seconds
REFUSED = "Too many failed login attempts"
LOGIN_URLS = ("/accounts/login/", "/admin/login/")


def cache():
    return caches["throttle"]


@pytest.fixture(autouse=True)
def _throttle(settings, db, monkeypatch):
    # Real-time tests: every delay lasts MAX_DELAY, so a slow machine cannot outlive one mid-test; the tests
    # under ``clock`` see the real doubling delays.
    monkeypatch.setattr(throttle, "delay_seconds", lambda *, excess: MAX_DELAY)
    settings.LOGIN_FAILURE_LIMIT = LIMIT
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = ADDRESS_LIMIT
    settings.LOGIN_FAILURE_WINDOW_SECONDS = WINDOW
    settings.LOGIN_DELAY_MAX_SECONDS = MAX_DELAY
    settings.LOGIN_TRUSTED_PROXIES = []
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
    monkeypatch.setattr(throttle, "delay_seconds", REAL_DELAY)
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


def _over_the_limit(client, username="alice", ip="10.0.0.1", url="/accounts/login/"):
    """LIMIT checked failures, then one more that passes the first (1 s) delay: the account is now delayed."""
    _fail(client, LIMIT + 1, username=username, ip=ip, url=url)


def test_failures_beyond_the_limit_are_delayed_with_a_message(client, alice):
    _over_the_limit(client)
    response = _login(client, "alice", "correct-horse", ip="10.0.0.2")
    assert response.status_code == 429
    body = response.content.decode()
    # The page says how long, as the header does (60 s left says "1 minute"; a slow machine may be a second in).
    assert REFUSED in body and throttle.refusal_message(seconds=int(response["Retry-After"])) in body
    assert "1 minute" in throttle.refusal_message(seconds=MAX_DELAY)
    assert 'name="username"' in body and 'value="alice"' in body  # the form is shown again
    assert 1 <= int(response["Retry-After"]) <= MAX_DELAY
    assert "_auth_user_id" not in client.session  # the right password did not log in


def test_admin_login_is_throttled(client, root):
    _over_the_limit(client, username="root", url="/admin/login/")
    response = _login(client, "root", "root-password", url="/admin/login/")
    assert response.status_code == 429
    assert REFUSED in response.content.decode() and 'value="root"' in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_admin_login_still_logs_in_at_the_limit(client, root):
    _fail(client, LIMIT, username="root", url="/admin/login/")
    response = _login(client, "root", "root-password", url="/admin/login/")
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(root.pk)


def test_one_counter_for_every_login_form(client, root):
    _fail(client, LIMIT, username="root", url="/accounts/login/")
    _fail(client, 1, username="root", url="/admin/login/")
    for url in LOGIN_URLS:
        assert _login(client, "root", "root-password", url=url).status_code == 429


def test_fullwidth_and_other_nfkc_variants_share_the_counter(client, alice):
    """F1: Django's form authenticates NFKC(username); ``ａｌｉｃｅ`` must not get a fresh counter."""
    assert throttle.normalise_username("\uff41lice") == throttle.normalise_username("alice")
    assert throttle.normalise_username(" ALICE ") == "alice"
    _over_the_limit(client, ip="10.0.0.1")
    for variant in ("\uff41\uff4c\uff49\uff43\uff45", "alic\uff45", "Alice"):
        response = _login(client, variant, "correct-horse", ip="10.0.0.9")
        assert response.status_code == 429, variant
    assert "_auth_user_id" not in client.session


def test_any_text_makes_a_key():
    # The input-cleaning middleware refuses lone surrogates first; the throttle would not fail on them either.
    assert throttle.counter_key(kind="user", value=throttle.normalise_username("\ud800x")).startswith(
        "physreview:login-failures:user:"
    )


def test_success_clears_the_accounts_counter(client, alice):
    _fail(client, LIMIT, ip="10.0.0.1")
    assert cache().get(f"{throttle.counter_key(kind='user', value='alice')}:count") == LIMIT
    assert _login(client, "alice", "correct-horse", ip="10.0.0.2").status_code == 302
    assert cache().get(f"{throttle.counter_key(kind='user', value='alice')}:count") is None
    client.logout()
    client.cookies.clear()
    _fail(client, LIMIT, ip="10.0.0.3")  # a full allowance again, every one checked
    assert _login(client, "alice", "correct-horse", ip="10.0.0.3").status_code == 302


def test_only_failures_count(client, alice):
    for _ in range(3 * LIMIT):
        assert _login(Client(), "alice", "correct-horse").status_code == 302
    assert cache().get(f"{throttle.counter_key(kind='user', value='alice')}:count") is None
    assert cache().get(f"{throttle.counter_key(kind='ip', value='10.0.0.1')}:count") is None


def test_refused_attempts_are_not_counted(client, alice, clock):
    _over_the_limit(client)
    key = throttle.counter_key(kind="user", value="alice")
    assert cache().get(f"{key}:count") == LIMIT + 1
    for _ in range(20):
        assert _login(client, "alice", "wrong").status_code == 429
    assert cache().get(f"{key}:count") == LIMIT + 1
    clock[0] += 2  # the first delay (1 s) has passed
    assert _login(client, "alice", "correct-horse").status_code == 302


def test_delays_double_with_each_failure_up_to_the_maximum(client, alice, clock):
    _fail(client, LIMIT)
    waits = []
    for i in range(9):  # from a new address each time: the address's own limit stays out of it
        assert _login(client, "alice", "wrong", ip=f"10.5.0.{i}").status_code == 200  # through the delay: checked
        refused = _login(client, "alice", "wrong", ip=f"10.5.0.{i}")
        assert refused.status_code == 429
        waits.append(int(refused["Retry-After"]))
        clock[0] += waits[-1]
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_a_stranger_cannot_lock_out_an_account(root, clock):
    """F2: 200 wrong passwords for the admin from many addresses; its owner, from anywhere, waits at most the
    maximum delay once the stranger stops, never minutes of refusals."""
    for i in range(200):
        _login(Client(), "root", "wrong", ip=f"10.3.{i // 250}.{i % 250}")
        clock[0] += 0.5
    owner = Client()
    response = _login(owner, "root", "root-password", ip="192.168.1.20")
    if response.status_code == 429:
        assert int(response["Retry-After"]) <= MAX_DELAY
        clock[0] += int(response["Retry-After"])
        response = _login(owner, "root", "root-password", ip="192.168.1.20")
    assert response.status_code == 302


def test_a_known_browser_is_not_delayed_by_a_strangers_failures(root, clock):
    """The owner logged in from this browser before (device cookie): a stranger hammering the account at every
    delay does not even delay them."""
    owner = Client()
    assert _login(owner, "root", "root-password", ip="192.168.1.20").status_code == 302
    assert owner.cookies[throttle.DEVICE_COOKIE].value
    device = owner.cookies[throttle.DEVICE_COOKIE].value
    owner.logout()  # the test client's logout forgets every cookie; a browser keeps this one
    owner.cookies[throttle.DEVICE_COOKIE] = device
    for i in range(100):
        _login(Client(), "root", "wrong", ip=f"10.4.0.{i}")
    assert _login(Client(), "root", "root-password", ip="10.4.1.1").status_code == 429  # a new browser waits
    assert _login(owner, "root", "root-password", ip="192.168.1.20").status_code == 302


def test_a_device_cookie_for_another_account_or_forged_does_not_help(client, alice, root):
    assert _login(client, "root", "root-password").status_code == 302
    device = client.cookies[throttle.DEVICE_COOKIE].value
    client.logout()
    client.cookies[throttle.DEVICE_COOKIE] = device
    _over_the_limit(Client(), ip="10.0.0.7")
    assert _login(client, "alice", "correct-horse", ip="10.0.0.8").status_code == 429  # cookie names root
    client.cookies[throttle.DEVICE_COOKIE] = "forged"
    assert _login(client, "alice", "correct-horse", ip="10.0.0.8").status_code == 429


def test_a_mistyping_user_behind_nat_delays_nobody_else(client, db):
    """F2: a clinic behind one address. One user mistypes many times; every colleague still logs in."""
    users = [get_user_model().objects.create_user(username=f"nurse{i}", password=f"pw-{i}-secret") for i in range(24)]
    _fail(client, LIMIT, username="nurse0", ip="172.16.0.1")
    for i, user in enumerate(users[1:], start=1):
        response = _login(Client(), user.username, f"pw-{i}-secret", ip="172.16.0.1")
        assert response.status_code == 302, user.username


def test_one_address_cannot_spray_many_usernames(db, clock):
    for i in range(ADDRESS_LIMIT):
        _login(Client(), f"u{i}", "wrong", ip="10.0.0.66")
    assert _login(Client(), "u-next", "wrong", ip="10.0.0.66").status_code == 200  # passes the first delay
    refused = _login(Client(), "u-other", "wrong", ip="10.0.0.66")
    assert refused.status_code == 429 and int(refused["Retry-After"]) == 1
    assert _login(Client(), "u-other", "wrong", ip="10.0.0.67").status_code == 200  # other addresses unaffected


def test_failures_outside_the_window_are_forgotten(client, alice, clock):
    _fail(client, LIMIT)
    clock[0] += WINDOW + 1
    _fail(client, LIMIT)  # the old failures no longer count: each is checked
    assert cache().get(f"{throttle.counter_key(kind='user', value='alice')}:count") == LIMIT


def test_counters_expire_with_the_window_in_the_cache(clock):
    attempt = throttle.begin_attempt(username="carol", ip="10.1.1.1")
    attempt.failed()
    key = throttle.counter_key(kind="user", value="carol")
    assert cache().get(f"{key}:count") == 1
    # LocMemCache keeps the expiry time per key; the counter expires with the window.
    expiry = cache()._expire_info[cache().make_and_validate_key(f"{key}:count")]
    assert expiry == pytest.approx(clock[0] + WINDOW, abs=1)


def test_refused_attempt_does_not_check_the_password(client, alice, monkeypatch):
    _over_the_limit(client)
    called = []
    monkeypatch.setattr("django.contrib.auth.forms.authenticate", lambda *a, **k: called.append(1))
    assert _login(client, "alice", "correct-horse").status_code == 429
    assert called == []


def test_login_page_get_is_not_throttled(client, alice):
    _over_the_limit(client)
    assert client.get(reverse("login"), REMOTE_ADDR="10.0.0.1").status_code == 200
    assert client.get("/admin/login/", REMOTE_ADDR="10.0.0.1").status_code == 200


def _request(remote, forwarded=None):
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().post("/accounts/login/", **meta)


def test_client_address_ignores_x_forwarded_for_by_default():
    assert throttle.client_ip(request=_request("203.0.113.5", "1.2.3.4")) == "203.0.113.5"


def test_client_address_behind_a_trusted_proxy(settings):
    settings.LOGIN_TRUSTED_PROXIES = ["10.0.0.0/8", "192.0.2.7"]
    # The proxy appends the peer it saw; what the client wrote to the left is not believed.
    assert throttle.client_ip(request=_request("10.1.1.1", "6.6.6.6, 198.51.100.9")) == "198.51.100.9"
    assert throttle.client_ip(request=_request("10.1.1.1", "198.51.100.9, 192.0.2.7")) == "198.51.100.9"
    assert throttle.client_ip(request=_request("10.1.1.1")) == "10.1.1.1"
    # A peer that is not a trusted proxy: its header is ignored.
    assert throttle.client_ip(request=_request("203.0.113.5", "198.51.100.9")) == "203.0.113.5"


def test_clients_behind_a_trusted_proxy_have_their_own_address_counters(settings, db):
    settings.LOGIN_TRUSTED_PROXIES = ["10.0.0.2"]
    for i in range(ADDRESS_LIMIT + 1):
        Client().post(
            "/accounts/login/",
            {"username": f"x{i}", "password": "wrong"},
            REMOTE_ADDR="10.0.0.2",
            HTTP_X_FORWARDED_FOR="198.51.100.1",
        )
    refused = Client().post(
        "/accounts/login/",
        {"username": "y", "password": "w"},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="198.51.100.1",
    )
    other = Client().post(
        "/accounts/login/",
        {"username": "y", "password": "w"},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="198.51.100.2",
    )
    assert (refused.status_code, other.status_code) == (429, 200)


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
    """30 wrong passwords at once (as from 30 server processes): only LIMIT + 1 reach the password check."""
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
    assert len(checked) == LIMIT + 1  # the free failures, then one through the delay
    assert sorted(statuses) == [200] * (LIMIT + 1) + [429] * (30 - LIMIT - 1)


@pytest.mark.django_db(transaction=True)
def test_simultaneous_correct_logins_from_one_address_all_succeed():
    """F2: 24 colleagues behind one NAT address log in at once, after one of them mistyped: none is refused."""
    if not serves_concurrent_connections():
        pytest.skip("needs a database that serves several connections at once")
    for i in range(24):
        get_user_model().objects.create_user(username=f"nurse{i}", password=f"pw-{i}-secret")
    _fail(Client(), LIMIT, username="nurse0", ip="172.16.0.1")
    statuses = _in_threads(24, lambda i: _login(Client(), f"nurse{i}", f"pw-{i}-secret", ip="172.16.0.1").status_code)
    assert statuses == [302] * 24


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
        ("LOGIN_DELAY_MAX_SECONDS", "0", "LOGIN_DELAY_MAX_SECONDS='0' must be at least 1"),
        ("LOGIN_ADDRESS_FAILURE_LIMIT", "x", "LOGIN_ADDRESS_FAILURE_LIMIT='x' is not an integer"),
        ("LOGIN_TRUSTED_PROXIES", "10.0.0.1,proxy", "LOGIN_TRUSTED_PROXIES='10.0.0.1,proxy' contains 'proxy'"),
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
    result = print_settings(
        "s.LOGIN_ADDRESS_FAILURE_LIMIT, s.LOGIN_DELAY_MAX_SECONDS, s.LOGIN_TRUSTED_PROXIES",
        env={"LOGIN_TRUSTED_PROXIES": " 10.0.0.0/8, ::1 "},
        var_dir=tmp_path,
    )
    assert result.stdout.strip() == "30 60 ['10.0.0.0/8', '::1']"
