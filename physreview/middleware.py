"""Project-wide response headers: Server-Timing (time inside Django), Content-Security-Policy, and
``Cache-Control: no-store`` on everything a signed-in user or the API is answered (:class:`NoStoreMiddleware`).

``Server-Timing: app;dur=<ms>, cpu;dur=<ms>`` on every response: the time spent inside Django.

``app`` is wall-clock time; ``cpu`` is the CPU time of the thread that served the request, which
stays meaningful on a busy machine where wall time also counts waiting for a core. First in
``MIDDLEWARE`` so both cover every other middleware, the view and template rendering (not the WSGI
server, the network or the client). Browsers show them in the network panel and
``bench/review_load.py`` reads them to tell server time from round-trip time.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start, cpu_start = time.perf_counter(), time.thread_time()
        response = self.get_response(request)
        wall_ms = (time.perf_counter() - start) * 1000
        cpu_ms = (time.thread_time() - cpu_start) * 1000
        metrics = f"app;dur={wall_ms:.1f}, cpu;dur={cpu_ms:.1f}"
        # Keep metrics another layer may have added (Server-Timing is a comma-separated list).
        existing = response.get("Server-Timing")
        response["Server-Timing"] = f"{existing}, {metrics}" if existing else metrics
        return response


# Everything is served by the app itself (no CDN): scripts and styles from static files, plus the
# inline blocks that carry this request's nonce (``{{ request.csp_nonce }}``). ``data:`` images: Swagger
# UI's icons and the admin's. No plugins, no framing, forms post only to the app.
CSP_TEMPLATE = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    """``Content-Security-Policy`` on every response, with a fresh nonce per request for inline blocks."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.csp_nonce = secrets.token_urlsafe(16)
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CSP_TEMPLATE.format(nonce=request.csp_nonce))
        return response


class NoStoreMiddleware:
    """``Cache-Control: no-store`` (Django's never-cache headers) on every answer to a signed-in user and every
    API answer, unless a view set its own: pages and API answers carry patient records, which neither the
    browser's disk cache nor a shared proxy may keep (OWASP ASVS 8.2.1; issue 36). Static files are answered by
    WhiteNoise before this runs and stay cacheable. After AuthenticationMiddleware (it reads ``request.user``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Cache-Control" in response:
            return response
        user = getattr(request, "user", None)
        if request.path.startswith("/api/") or (user is not None and user.is_authenticated):
            add_never_cache_headers(response)
        return response
