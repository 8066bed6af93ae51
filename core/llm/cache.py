"""Response cache in the database, keyed by a hash of the full canonical request.

The key (built in :mod:`core.llm.request`) covers everything that can change the answer (base
URL without credentials, model, messages, tools, every parameter, a caller-chosen salt) and nothing
secret: the API key is not part of the request body and so can never reach the key or the stored request.
"""

import contextlib
import logging
import threading
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, OperationalError, connection, transaction

if TYPE_CHECKING:
    from core.models import LLMCacheEntry

log = logging.getLogger("core.llm")
# SQLite has one writer: the threads of a run take turns for cache writes instead of failing on the lock.
_SQLITE_WRITES = threading.Lock()
_LOCKED_RETRIES = 6
_LOCKED_WAIT_S = 0.05


def lookup(*, key: str) -> "LLMCacheEntry | None":
    # Imported here so that importing core.llm never requires the app registry to be ready.
    from core.models import LLMCacheEntry

    return LLMCacheEntry.objects.filter(request_hash=key).first()


def store(
    *,
    key: str,
    base_url: str,
    model: str,
    request: dict[str, Any],
    response: dict[str, Any],
    prompt_tokens: int | None,
    completion_tokens: int | None,
    cost_usd: float | None,
) -> None:
    """Keep a successful response; a storage failure is logged, never lost work for the caller.

    One ``INSERT … ON CONFLICT DO NOTHING`` (a concurrent writer of the same key is not an error).
    On SQLite a read-then-insert transaction deadlocks with another writer ("database is locked" at
    once, the busy timeout does not apply), so there the insert is the only statement, the threads
    of this process take turns, and a lock still met (another process, a shared-cache test database)
    is waited out a few times before the write is skipped with a warning.
    """
    from core.models import LLMCacheEntry

    entry = LLMCacheEntry(
        request_hash=key,
        base_url=base_url[:500],
        model=model[:200],
        request=request,
        response=response,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=None if cost_usd is None else Decimal(str(cost_usd)),
    )
    sqlite = connection.vendor == "sqlite"
    for attempt in range(_LOCKED_RETRIES + 1):
        try:
            # A savepoint, so a failed insert cannot break the caller's surrounding transaction.
            with _SQLITE_WRITES if sqlite else contextlib.nullcontext(), transaction.atomic():
                LLMCacheEntry.objects.bulk_create([entry], ignore_conflicts=True)
            return
        except OperationalError as exc:
            if not (sqlite and "locked" in str(exc)) or attempt == _LOCKED_RETRIES:
                log.warning("LLM cache: response %s not stored (%s: %s)", key[:12], type(exc).__name__, exc)
                return
            time.sleep(_LOCKED_WAIT_S * 2**attempt)
        except DatabaseError as exc:
            log.warning("LLM cache: could not store response %s: %s", key[:12], type(exc).__name__)
            return
