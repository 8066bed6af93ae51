"""Login throttling for every login form (``/accounts/login/`` and ``/admin/login/``).

Each POST is counted BEFORE its password is checked, one counter per username and one per client IP,
with ``cache.add`` (start a window) and ``cache.incr`` (atomic on Redis, on
:class:`core.cachedb.AtomicDatabaseCache` and on LocMemCache): of 30 simultaneous wrong passwords
only ``LOGIN_FAILURE_LIMIT`` reach the password check. An attempt whose counter passes the limit is
refused (429 + Retry-After) until the window that began with the first attempt has passed. A
successful login takes back its own count: it clears the username's counter and gives the IP back one
attempt (it does not clear the IP's, so one good password cannot reset a guessing run on others). The
per-IP counter stops one address from spraying many usernames.

The counters must be shared by every server process: the ``throttle`` cache is the database by default
(Redis when ``CACHE_URL`` is Redis, or as ``THROTTLE_CACHE_URL`` says).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache

_PREFIX = "physreview:login-attempts"


def counters() -> BaseCache:
    """The ``throttle`` cache (looked up per call: tests override ``CACHES``)."""
    return caches["throttle"]


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


def _count(*, key: str, now: float, window: int) -> tuple[int, float]:
    """One more attempt on ``key``: (attempts in the window, start of the window)."""
    cache = counters()
    for _attempt in range(3):  # the key can expire between add and incr; start a new window then
        if cache.add(f"{key}:count", 0, timeout=window):
            cache.set(f"{key}:since", now, timeout=window)
        try:
            count = cache.incr(f"{key}:count")
        except ValueError:
            continue
        return count, cache.get(f"{key}:since", now)
    raise RuntimeError(f"the login throttle could not count an attempt on {key}")


def register_attempt(*, username: str, ip: str, now: float | None = None) -> int:
    """Count one login attempt; the seconds to wait when it is over the limit (refuse it), else 0."""
    now = time.time() if now is None else now
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    wait = 0.0
    for key in _keys(username=username, ip=ip):
        count, since = _count(key=key, now=now, window=window)
        if count > settings.LOGIN_FAILURE_LIMIT:
            wait = max(wait, since + window - now, 1)
    return math.ceil(wait)


def register_success(*, username: str, ip: str) -> None:
    """A login succeeded: forget the username's attempts and give the IP back the attempt it counted."""
    cache = counters()
    for key in _keys(username=username, ip=""):
        cache.delete_many([f"{key}:since", f"{key}:count"])
    for key in _keys(username="", ip=ip):
        try:
            if cache.decr(f"{key}:count") < 0:
                cache.incr(f"{key}:count")
        except ValueError:  # the window ended meanwhile
            pass


def refusal_message(*, seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many failed login attempts. Please try again in %(minutes)d minute.",
        "Too many failed login attempts. Please try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def throttled(
    request: HttpRequest, *, login: Callable[[], HttpResponse], refuse: Callable[[str], HttpResponse]
) -> HttpResponse:
    """Run a login view's POST through the throttle: ``refuse(message)`` when over the limit, else
    ``login()``; its redirect (Django's login views redirect only after a successful login) is a success."""
    if request.method != "POST":
        return login()
    username, ip = request.POST.get("username", ""), client_ip(request=request)
    wait = register_attempt(username=username, ip=ip)
    if wait:
        response = refuse(refusal_message(seconds=wait))
        response.status_code = 429
        response["Retry-After"] = str(wait)
        return response
    response = login()
    if response.status_code == 302:
        register_success(username=username, ip=ip)
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
