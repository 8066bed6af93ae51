"""Playwright in Debian's Chromium (no browser download), against pytest-django's live server."""

import os
import shutil
import threading
import time

import pytest

# Playwright's sync API runs an event loop in the test thread; the ORM calls made by fixtures are safe here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install the Debian 'chromium' package (.ci/run does)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
    }


@pytest.fixture
def screenshot_dir(settings):
    path = settings.VAR_DIR / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    # Tests wait with page.wait_for_function("<js>"), which Chromium evaluates as a string: the app's CSP
    # (no 'unsafe-eval') would refuse it. tests/e2e/test_csp.py opens its own context with the CSP on.
    return {**browser_context_args, "bypass_csp": True}


class _InFlightRequests:
    """Wraps the live server's WSGI app to count the requests it is still serving.

    Closing a page does not stop what it already sent: an htmx request, the autosave, or the pagehide beacon of
    js/draft.js can still be in the server when pytest-django flushes the database after the test, and on
    PostgreSQL that TRUNCATE and the request's transaction can deadlock (seen in a full run, at teardown of
    test_conflict_merge). The fixture below waits for the server to be quiet before the flush.
    """

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.serving = 0
        self.last_change = time.monotonic()

    def _add(self, n: int) -> None:
        with self.lock:
            self.serving += n
            self.last_change = time.monotonic()

    def __call__(self, environ, start_response):
        self._add(1)
        try:
            result = self.app(environ, start_response)
        except BaseException:
            self._add(-1)
            raise
        return _ClosingBody(result, on_close=lambda: self._add(-1))

    def wait_quiet(self, *, quiet: float = 0.25, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.serving == 0 and time.monotonic() - self.last_change >= quiet:
                    return
            time.sleep(0.05)
        raise AssertionError(f"the live server still served {self.serving} request(s) {timeout:.0f} s after the test")


class _ClosingBody:
    """A WSGI response body that reports when the server has closed it (the request is over, database included)."""

    def __init__(self, body, *, on_close):
        self.body = body
        self.on_close = on_close

    def __iter__(self):
        return iter(self.body)

    def close(self) -> None:
        try:
            if hasattr(self.body, "close"):
                self.body.close()
        finally:
            self.on_close()


@pytest.fixture(autouse=True)
def _live_server_quiet_before_flush(request):
    """Autouse, so set up after pytest-django's live-server helper (which flushes at its teardown) and torn down
    before it, but after the test's page and browser context are closed."""
    if "live_server" not in request.fixturenames:
        yield
        return
    httpd = request.getfixturevalue("live_server").thread.httpd
    counter = httpd.get_app()
    if not isinstance(counter, _InFlightRequests):
        counter = _InFlightRequests(counter)
        httpd.set_app(counter)
    yield
    counter.wait_quiet()
