"""``Server-Timing: app;dur=<ms>, cpu;dur=<ms>`` on every response: the time spent inside Django.

``app`` is wall-clock time; ``cpu`` is the CPU time of the thread that served the request, which
stays meaningful on a busy machine where wall time also counts waiting for a core. First in
``MIDDLEWARE`` so both cover every other middleware, the view and template rendering (not the WSGI
server, the network or the client). Browsers show them in the network panel and
``bench/review_load.py`` reads them to tell server time from round-trip time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


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
