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
        if os.environ.get("CI"):
            pytest.fail("CI must set CELERY_BROKER_URL (a local Redis) for the worker test")
        pytest.skip("CELERY_BROKER_URL is not set: no broker to run a worker against")
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
