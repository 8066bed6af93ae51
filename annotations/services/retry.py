"""Retry a short write transaction that SQLite refused with "database is locked".

SQLite has one writer: two transactions that both read, then write, deadlock and one fails at once
(the busy timeout does not apply to a read lock being upgraded). The losing call is simply run again;
PostgreSQL never raises this (row locks make it wait instead).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.db import OperationalError, connection

P = ParamSpec("P")
R = TypeVar("R")

ATTEMPTS = 8
FIRST_PAUSE = 0.02  # seconds, doubled after each attempt (≈ 5 s in all)


class Busy(Exception):
    """The database stayed locked by other writers: the caller shows "try again"."""


def is_locked(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError) and "locked" in str(exc).lower()


def retry_locked(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` (which opens its own transaction) again while SQLite says the database is locked;
    :class:`Busy` after :data:`ATTEMPTS`. Inside an outer transaction there is nothing to retry."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        pause = FIRST_PAUSE
        for attempt in range(ATTEMPTS):
            try:
                return fn(*args, **kwargs)
            except OperationalError as exc:
                if not is_locked(exc) or connection.in_atomic_block:
                    raise
                if attempt == ATTEMPTS - 1:
                    raise Busy("the database is busy with other saves; please try again") from exc
                time.sleep(pause)
                pause *= 2
        raise AssertionError("unreachable")

    return wrapper
