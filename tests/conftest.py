"""Shared fixtures.

The bundled demo cohort (``ehr/data/demo_cohort``) is imported once into the test database
with the real importer, so tool and page tests run against the same records the demo serves.
pytest-django runs transactional tests last; ``demo_cohort`` reloads the data if one of them
flushed it.
"""

import os
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.management import call_command

DEMO_COHORT_DIR = Path(settings.BASE_DIR) / "ehr" / "data" / "demo_cohort"


def _load_demo_cohort() -> None:
    from ehr.models import Patient

    if not Patient.objects.exists():
        call_command("import_mimic", str(DEMO_COHORT_DIR), "--quiet")


def _services_line() -> str:
    """Which database and broker this run uses: a newcomer's run and CI's differ only here."""
    db = settings.DATABASES["default"]
    engine = db["ENGINE"].rsplit(".", 1)[-1]
    if engine == "sqlite3":
        where = f"SQLite file {db.get('TEST', {}).get('NAME') or '(in memory)'}"
    else:
        where = f"{engine} {db.get('HOST') or 'localhost'}:{db.get('PORT') or ''} test_{db['NAME']}"
    broker = settings.CELERY_BROKER_URL or "none (tests that need a Celery worker are skipped)"
    return f"test database: {where}; broker: {broker}"


def pytest_report_header(config):
    return _services_line()


def pytest_sessionstart(session):
    # CI's services run must not quietly fall back to the embedded default (a typo in DATABASE_URL's name).
    missing = settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") or not settings.CELERY_BROKER_URL
    if os.environ.get("PHYSREVIEW_REQUIRE_SERVICES") and missing:
        raise pytest.UsageError(f"PHYSREVIEW_REQUIRE_SERVICES is set, but {_services_line()}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    terminalreporter.write_line(_services_line())


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        _load_demo_cohort()


@pytest.fixture
def demo_cohort(db):
    """The demo cohort, present in the database (reloaded after a transactional test flushed it)."""
    _load_demo_cohort()
    return DEMO_COHORT_DIR


@pytest.fixture(autouse=True)
def _celery_in_process(request):
    """Tasks run in-process in tests unless a test asks for the real worker (marker ``celery_worker``)."""
    from physreview.celery import app

    if request.node.get_closest_marker("celery_worker"):
        yield
        return
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def broker_url():
    url = settings.CELERY_BROKER_URL
    if not url:
        if os.environ.get("PHYSREVIEW_REQUIRE_SERVICES"):
            pytest.fail("PHYSREVIEW_REQUIRE_SERVICES is set but CELERY_BROKER_URL is not (a local Redis)")
        pytest.skip("needs Redis: CELERY_BROKER_URL is not set (the Celery worker and Redis cache tests use it)")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.fail(f"CELERY_BROKER_URL={url} is set but Redis does not answer: {exc}")
    from physreview.celery import app

    # Messages left by an aborted earlier run would reach this run's worker; start from an empty queue.
    app.control.purge()
    return url


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty Django cache (rendered fragments such as the review screen's evidence)
    and without the EHR tools' copy of the dictionary tables (a test may have added items)."""
    from django.core.cache import cache

    from ehr.fhir import codes

    cache.clear()
    codes.clear_cache()
    yield


@pytest.fixture(autouse=True)
def _ui_language_reset():
    """A request in Chinese (language cookie) leaves zh active in the test thread, and later renders outside a
    request (render_to_string) would then be in Chinese: back to the default language after every test."""
    from django.utils import translation

    yield
    translation.deactivate()
