"""Celery application.

Without ``CELERY_BROKER_URL`` tasks run in-process (``task_always_eager``) so the demo
needs no broker; with it, workers on Redis pick them up. Settings live in
``physreview/settings.py`` under the ``CELERY_`` namespace.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")

app = Celery("physreview")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
