"""Playwright in Debian's Chromium (no browser download), against pytest-django's live server."""

import os
import shutil

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
