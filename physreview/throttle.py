"""Login throttling: refuse further logins after too many failures for a username or a client IP.

Failures are counted in Django's cache (``CACHES``), one counter per username and one per client IP,
each with the time of the first failure of its window. Once a counter reaches
``LOGIN_FAILURE_LIMIT`` within ``LOGIN_FAILURE_WINDOW_SECONDS`` of that first failure, attempts are
refused, without checking the password, until the window has passed. A successful login clears the
username's counter (not the IP's: one good password must not reset a password-guessing run).
"""

from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.translation import ngettext

_PREFIX = "physreview:login-failures"


def client_ip(*, request: HttpRequest) -> str:
    """The peer address. X-Forwarded-For is not trusted: any client can write it."""
    return request.META.get("REMOTE_ADDR") or ""


def counter_key(*, kind: str, value: str) -> str:
    """Cache key of the counter for a username (case-folded) or an IP; hashed to stay key-safe."""
    digest = hashlib.sha256(value.strip().casefold().encode()).hexdigest()
    return f"{_PREFIX}:{kind}:{digest}"


def _keys(*, username: str, ip: str) -> list[str]:
    keys = []
    if username.strip():
        keys.append(counter_key(kind="user", value=username))
    if ip:
        keys.append(counter_key(kind="ip", value=ip))
    return keys


def retry_after(*, username: str, ip: str, now: float | None = None) -> int:
    """Seconds until a login for (username, ip) is allowed again; 0 when it is allowed now."""
    now = time.time() if now is None else now
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    wait = 0.0
    for key in _keys(username=username, ip=ip):
        found = cache.get_many([f"{key}:since", f"{key}:count"])
        since, count = found.get(f"{key}:since"), found.get(f"{key}:count", 0)
        if since is not None and count >= settings.LOGIN_FAILURE_LIMIT and now - since < window:
            wait = max(wait, since + window - now)
    return math.ceil(wait)


def register_failure(*, username: str, ip: str, now: float | None = None) -> None:
    """Count one failed login against the username and the IP."""
    now = time.time() if now is None else now
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    for key in _keys(username=username, ip=ip):
        since = cache.get(f"{key}:since")
        if since is None or now - since >= window:
            cache.set_many({f"{key}:since": now, f"{key}:count": 0}, timeout=window)
        try:
            cache.incr(f"{key}:count")  # atomic on Redis; keeps the key's expiry
        except ValueError:  # the counter expired or was evicted in between
            cache.set(f"{key}:count", 1, timeout=window)


def clear(*, username: str) -> None:
    """Forget the failures counted against a username (after it logged in successfully)."""
    for key in _keys(username=username, ip=""):
        cache.delete_many([f"{key}:since", f"{key}:count"])


def refusal_message(*, seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many failed login attempts. Please try again in %(minutes)d minute.",
        "Too many failed login attempts. Please try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


class ThrottledLoginView(LoginView):
    """Django's LoginView that refuses attempts (status 429) while a username or IP is throttled."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        username = request.POST.get("username", "")
        wait = retry_after(username=username, ip=client_ip(request=request))
        if wait:
            form = self.get_form_class()(request=request, initial={"username": username})
            context = self.get_context_data(form=form, throttle_message=refusal_message(seconds=wait))
            response = self.render_to_response(context, status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form) -> HttpResponse:
        register_failure(username=self.request.POST.get("username", ""), ip=client_ip(request=self.request))
        return super().form_invalid(form)

    def form_valid(self, form) -> HttpResponse:
        clear(username=self.request.POST.get("username", ""))
        return super().form_valid(form)
