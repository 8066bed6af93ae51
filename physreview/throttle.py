"""Login throttling for every login form (``/accounts/login/`` and ``/admin/login/``).

The model (OWASP Authentication Cheat Sheet, "Login Throttling" and "Device Cookies"; docs/operations.md):

- **Keys.** One counter per account, keyed on the username as Django's login form normalises it before it
  authenticates (``UsernameField``: stripped, Unicode NFKC; then case-folded), so ``ｈd_user`` and ``hd_user``
  share one counter; one counter per client address (``REMOTE_ADDR``, or the first address a configured
  trusted proxy reports, see :func:`client_ip`).
- **Failures only.** A successful login counts nothing and clears its account's counter; refused attempts
  are never counted. An attempt on an account holds a place in the account's counter while its password is
  checked (``cache.incr``, atomic on every ``throttle`` cache), so simultaneous wrong passwords cannot pass
  the limit unchecked; a refused or successful attempt gives its place back.
- **Delays, not locks.** After ``LOGIN_FAILURE_LIMIT`` failures an account (and after
  ``LOGIN_ADDRESS_FAILURE_LIMIT`` an address) lets one attempt through per delay, 1 s doubling with each
  further failure up to ``LOGIN_DELAY_MAX_SECONDS``; attempts in between are refused with 429 and
  ``Retry-After`` (a few seconds, never minutes). Failures are forgotten ``LOGIN_FAILURE_WINDOW_SECONDS``
  after the first one.
- **Known browsers.** A successful login leaves a signed device cookie naming the account. An attempt with
  a valid device cookie for that account is counted on that device alone and passes the address delay, so
  a stranger's failures on the account, or on a shared address (a clinic behind NAT), never delay it.

Counters must be shared by every server process: the ``throttle`` cache is the database by default (Redis
when ``CACHE_URL`` is Redis, or as ``THROTTLE_CACHE_URL`` says).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import math
import secrets
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.views import LoginView
from django.core import signing
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache

_PREFIX = "physreview:login-failures"
DEVICE_COOKIE = "physreview_device"
_DEVICE_SALT = "physreview.throttle.device"


def counters() -> BaseCache:
    """The ``throttle`` cache (looked up per call: tests override ``CACHES``)."""
    return caches["throttle"]


def normalise_username(username: str) -> str:
    """The username as the login form authenticates it (strip, NFKC), case-folded."""
    return unicodedata.normalize("NFKC", username.strip()).casefold()


def _is_trusted(address: str, networks: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(network, strict=False) for network in networks)


def client_ip(*, request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR``, unless that is one of ``LOGIN_TRUSTED_PROXIES`` (none by
    default); then the last X-Forwarded-For hop that is not a trusted proxy (the hops to its left are
    written by the client and are not believed)."""
    remote = request.META.get("REMOTE_ADDR") or ""
    proxies = settings.LOGIN_TRUSTED_PROXIES
    if not proxies or not _is_trusted(remote, proxies):
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop, proxies):
            return hop
    return hops[0] if hops else remote


def counter_key(*, kind: str, value: str) -> str:
    """Cache key of the counter for an account, a device or an address; hashed to stay key-safe."""
    return f"{_PREFIX}:{kind}:{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()}"


def delay_seconds(*, excess: int) -> int:
    """The delay after ``excess`` failures beyond the limit: 1 s, doubling, at most LOGIN_DELAY_MAX_SECONDS."""
    return min(2 ** min(excess, 30), settings.LOGIN_DELAY_MAX_SECONDS)


def _count(*, key: str, delta: int = 1) -> int:
    """Add ``delta`` to ``key``'s counter (a new one lasts LOGIN_FAILURE_WINDOW_SECONDS); the new value."""
    cache = counters()
    for _attempt in range(3):  # the key can expire between add and incr; start a new window then
        cache.add(f"{key}:count", 0, timeout=settings.LOGIN_FAILURE_WINDOW_SECONDS)
        try:
            return cache.incr(f"{key}:count", delta)
        except ValueError:
            continue
    raise RuntimeError(f"the login throttle could not count an attempt on {key}")


def _give_back(*, key: str) -> None:
    with contextlib.suppress(ValueError):  # the window ended meanwhile
        counters().decr(f"{key}:count")


def _pass_gate(*, key: str, excess: int, now: float) -> int:
    """Over the limit: the first attempt in each delay passes (0); others get the seconds left to wait.

    The gate holds its end time and lives a second longer (the database cache rounds expiry times down); the
    first attempt after that end claims the next gate with an ``add`` of its own, so only one passes."""
    cache, gate, delay = counters(), f"{key}:gate", delay_seconds(excess=excess)
    for _attempt in range(3):
        if cache.add(gate, now + delay, timeout=delay + 1):
            return 0
        until = cache.get(gate)
        if until is None:  # expired between add and get
            continue
        if until > now:
            return max(1, math.ceil(until - now))
        if cache.add(f"{gate}:after:{until}", 1, timeout=delay + 1):
            cache.set(gate, now + delay, timeout=delay + 1)
            return 0
        until = cache.get(gate)
        return max(1, math.ceil(until - now)) if until and until > now else 1
    return 1


def device_token(*, username: str) -> str:
    """A signed cookie value naming the account and this device (a random nonce)."""
    return signing.dumps({"u": normalise_username(username), "n": secrets.token_urlsafe(16)}, salt=_DEVICE_SALT)


def device_nonce(*, request: HttpRequest, username: str) -> str | None:
    """The nonce of a valid device cookie for this account, else None."""
    raw = request.COOKIES.get(DEVICE_COOKIE)
    if not raw:
        return None
    try:
        data = signing.loads(raw, salt=_DEVICE_SALT, max_age=settings.LOGIN_DEVICE_COOKIE_DAYS * 86400)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("u") != normalise_username(username):
        return None
    return str(data.get("n") or "") or None


@dataclass
class Attempt:
    """One login POST as the throttle sees it: its counter keys and the seconds it must wait (0: go on)."""

    username: str
    account_key: str | None
    address_key: str | None
    known_device: bool
    wait: int = 0

    def failed(self) -> None:
        """The password was wrong: the account keeps the place it held; the address counts one failure."""
        if self.address_key and not self.known_device:
            _count(key=self.address_key)

    def succeeded(self) -> None:
        """Logged in: the account's counters (and this device's) are cleared."""
        keys = {self.account_key, counter_key(kind="user", value=self.username)} - {None}
        counters().delete_many([f"{key}:{part}" for key in keys for part in ("count", "gate")])


def begin_attempt(*, username: str, ip: str, device: str | None = None, now: float | None = None) -> Attempt:
    """Check the delays and hold a place in the account's counter; ``wait`` > 0 means refuse."""
    now = time.time() if now is None else now
    name = normalise_username(username)
    if device:
        account_key = counter_key(kind="device", value=f"{name}\0{device}")
    else:
        account_key = counter_key(kind="user", value=name) if name else None
    attempt = Attempt(
        username=name,
        account_key=account_key,
        address_key=counter_key(kind="ip", value=ip) if ip else None,
        known_device=bool(device),
    )
    if attempt.address_key and not device:
        failures = counters().get(f"{attempt.address_key}:count", 0)
        if failures >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            excess = failures - settings.LOGIN_ADDRESS_FAILURE_LIMIT
            attempt.wait = _pass_gate(key=attempt.address_key, excess=excess, now=now)
    if attempt.account_key and not attempt.wait:
        failures = _count(key=attempt.account_key) - 1  # those before this one (and any still being checked)
        if failures >= settings.LOGIN_FAILURE_LIMIT:
            excess = failures - settings.LOGIN_FAILURE_LIMIT
            attempt.wait = _pass_gate(key=attempt.account_key, excess=excess, now=now)
            if attempt.wait:
                _give_back(key=attempt.account_key)
    return attempt


def refusal_message(*, seconds: int) -> str:
    if seconds < 60:
        return ngettext(
            "Too many failed login attempts. Please try again in %(seconds)d second.",
            "Too many failed login attempts. Please try again in %(seconds)d seconds.",
            seconds,
        ) % {"seconds": seconds}
    minutes = math.ceil(seconds / 60)
    return ngettext(
        "Too many failed login attempts. Please try again in %(minutes)d minute.",
        "Too many failed login attempts. Please try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def throttled(
    request: HttpRequest, *, login: Callable[[], HttpResponse], refuse: Callable[[str], HttpResponse]
) -> HttpResponse:
    """Run a login view's POST through the throttle: ``refuse(message)`` while a delay runs, else
    ``login()``; its redirect (Django's login views redirect only after a successful login) is a success."""
    if request.method != "POST":
        return login()
    username = request.POST.get("username", "")
    attempt = begin_attempt(
        username=username, ip=client_ip(request=request), device=device_nonce(request=request, username=username)
    )
    if attempt.wait:
        response = refuse(refusal_message(seconds=attempt.wait))
        response.status_code = 429
        response["Retry-After"] = str(attempt.wait)
        return response
    try:
        response = login()
    except BaseException:
        if attempt.account_key:
            _give_back(key=attempt.account_key)
        raise
    if response.status_code == 302:
        attempt.succeeded()
        response.set_cookie(
            DEVICE_COOKIE,
            device_token(username=username),
            max_age=settings.LOGIN_DEVICE_COOKIE_DAYS * 86400,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Lax",
        )
    else:
        attempt.failed()
    return response


class ThrottledLoginView(LoginView):
    """The app's login page (``/accounts/login/``) behind the throttle."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        def refuse(message: str) -> HttpResponse:
            form = self.get_form_class()(request=request, initial={"username": request.POST.get("username", "")})
            return self.render_to_response(self.get_context_data(form=form, throttle_message=message))

        return throttled(
            request, login=lambda: super(ThrottledLoginView, self).post(request, *args, **kwargs), refuse=refuse
        )


class ThrottledAdminSite(admin.AdminSite):
    """The default admin site (``physreview.apps.PhysReviewAdminConfig``) with the same throttle on its login."""

    @method_decorator(never_cache)
    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        def refuse(message: str) -> HttpResponse:
            form = AdminAuthenticationForm(request, initial={"username": request.POST.get("username", "")})
            context = {
                **self.each_context(request),
                "title": _("Log in"),
                "app_path": request.get_full_path(),
                "form": form,
                "throttle_message": message,
            }
            return render(request, self.login_template or "admin/login.html", context)

        return throttled(
            request, login=lambda: super(ThrottledAdminSite, self).login(request, extra_context), refuse=refuse
        )
