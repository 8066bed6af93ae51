"""Playwright in Debian's Chromium (no browser download), against pytest-django's live server."""

import os
import shutil
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path

import psutil
import pytest
from playwright.sync_api import Error as PlaywrightError

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


# How long closing a browser context may take before the browser is killed and launched again. A close normally takes
# well under a second; once in a full PostgreSQL run (and once in CI) it never returned, after a test that had passed.
CONTEXT_CLOSE_SECONDS = 30.0
_BROWSER: dict = {}


def close_seconds() -> float:
    return CONTEXT_CLOSE_SECONDS  # read at each close, so a test can shorten it


class BrowserCloseHung(pytest.PytestWarning):
    """A browser context did not close in time: the browser was killed and relaunched (shown in the summary)."""


def connected_browser(launch_browser):
    current = _BROWSER.get("browser")
    if current is None or not current.is_connected():
        current = _BROWSER["browser"] = launch_browser()
    return current


@pytest.fixture(scope="session")
def _browser_for_the_session(launch_browser):
    # Depends on Playwright's session fixtures, so it is closed before Playwright stops.
    yield
    current = _BROWSER.pop("browser", None)
    if current is not None and current.is_connected():
        current.close()


@pytest.fixture
def browser(launch_browser, _browser_for_the_session):
    """pytest-playwright's browser, launched again when a hung context close had it killed (see new_context)."""
    return connected_browser(launch_browser)


def browser_processes() -> list:
    # The Chromium processes are children of Playwright's driver, itself a child of this pytest process.
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if "chrom" in proc.name().lower():
                found.append(proc)
        except psutil.NoSuchProcess:
            pass
    return found


_PROJECT = str(Path(__file__).resolve().parents[2])


def _server_state(app) -> str:
    """What the live server was doing when a close hung: requests in flight and where its request threads were."""
    if not isinstance(app, _InFlightRequests):
        return "no live server"
    frames = sys._current_frames()
    where = []
    for thread in threading.enumerate():
        stack = traceback.extract_stack(frames.get(thread.ident)) if thread.ident in frames else []
        if any("process_request" in f.name for f in stack):
            ours = [f for f in stack if f.filename.startswith(_PROJECT) and "/.venv/" not in f.filename]
            mine = ours[-1:] or stack[-1:]
            where.append(f"{thread.name} at {mine[0].name}:{mine[0].lineno}" if mine else thread.name)
    return f"live server serving {app.serving} request(s); request threads: {where or 'none'}"


def _kill_browser_processes(killed: list, state: list | None = None, app=None) -> None:
    if state is not None:
        state.append(_server_state(app))
    for proc in browser_processes():
        try:
            proc.kill()
            killed.append(proc.pid)
        except psutil.NoSuchProcess:
            pass


@pytest.fixture
def new_context(new_context, request):
    """pytest-playwright's contexts, each closed with a bound: a close that hangs kills the browser, warns, and the
    next test gets a new one, instead of the whole run waiting until CI gives up."""

    def create(**kwargs):
        context = new_context(**kwargs)
        close = context.close
        urls = []
        # Read here, in the test's thread: the watchdog below only reads the counter.
        app = request.getfixturevalue("live_server").thread.httpd.get_app() if _uses_live_server(request) else None

        def bounded_close(*args, **kw):
            urls[:] = [p.url for p in context.pages]
            killed: list = []
            state: list = []
            timer = threading.Timer(close_seconds(), _kill_browser_processes, args=(killed, state, app))
            timer.start()
            try:
                close(*args, **kw)
            except PlaywrightError:
                if not killed:
                    raise
            finally:
                timer.cancel()
            if killed:
                warnings.warn(
                    BrowserCloseHung(
                        f"{request.node.nodeid}: closing the browser context took over {close_seconds():.0f} s "
                        f"(pages: {urls}; {'; '.join(state)}); Chromium was killed (pids {killed}) and is launched "
                        "again"
                    ),
                    stacklevel=1,
                )

        context.close = bounded_close
        return context

    return create


def _uses_live_server(request) -> bool:
    return "live_server" in request.fixturenames


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
