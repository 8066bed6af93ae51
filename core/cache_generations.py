"""Cache generations kept in the database: counters that cached things put in their keys.

With several server processes each holding its own in-memory cache (the default, ``locmem``), deleting a
key reaches only the process that deleted it, and a management command (``compile_rubrics``, ``audit_gold``)
reaches none. A generation lives in the database instead: :func:`bump` (in the writer's transaction, so it
is seen exactly when the change is) moves the key of every cached copy in every process and with every cache
backend; the old copies are never read again and age out. Issue 36, F10.

Reading costs one query for all generations, made once per request (remembered until the request ends) and
at every call outside a request (commands, tasks), so a long-running process never keeps an old value.
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.signals import request_finished, request_started
from django.db import IntegrityError, transaction
from django.db.models import F

from core.models import CacheGeneration

_request = threading.local()  # Django serves a request in one thread; its generations are remembered there


def _start(**_signal: Any) -> None:
    _request.active, _request.values = True, None


def _finish(**_signal: Any) -> None:
    _request.active, _request.values = False, None


def connect_signals() -> None:
    """Remember the generations for the length of a request (called by ``CoreConfig.ready``)."""
    request_started.connect(_start, dispatch_uid="cache-generations-start")
    request_finished.connect(_finish, dispatch_uid="cache-generations-finish")


def generation(name: str) -> int:
    """The current value of generation ``name`` (0 before its first bump)."""
    values = _request.values if getattr(_request, "active", False) else None
    if values is None:
        values = dict(CacheGeneration.objects.values_list("name", "value"))
        if getattr(_request, "active", False):
            _request.values = values
    return values.get(name, 0)


def bump(name: str) -> None:
    """Move generation ``name`` on, in the caller's transaction: other processes see the new value when the
    change it stands for is committed, and only then."""
    _request.values = None  # this request reads the new value too
    if CacheGeneration.objects.filter(name=name).update(value=F("value") + 1):
        return
    try:
        with transaction.atomic():  # a savepoint: a concurrent first bump must not spoil the caller's transaction
            CacheGeneration.objects.create(name=name, value=1)
    except IntegrityError:
        CacheGeneration.objects.filter(name=name).update(value=F("value") + 1)
