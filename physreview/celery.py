"""Celery application.

Without ``CELERY_BROKER_URL`` tasks run in-process (``task_always_eager``) so the demo
needs no broker; with it, workers on Redis pick them up. Settings live in
``physreview/settings.py`` under the ``CELERY_`` namespace.
"""

import os

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")

app = Celery("physreview")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _sweep_stale_jobs(**_kwargs) -> None:
    """Stale snapshot builds and generation runs are resumed by the worker itself (physreview.jobs)."""
    from physreview.jobs import start_sweeper

    start_sweeper()


@worker_shutdown.connect
def _stop_sweeping(**_kwargs) -> None:
    from physreview.jobs import stop_sweeper

    stop_sweeper()
