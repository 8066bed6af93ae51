"""Response cache in the database, keyed by a hash of the full canonical request.

The key (built in :mod:`physreview.llm.request`) covers everything that can change the answer (base
URL without credentials, model, messages, tools, every parameter, a caller-chosen salt) and nothing
secret: the API key is not part of the request body and so can never reach the key or the stored request.
"""

import logging
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, transaction

if TYPE_CHECKING:
    from physreview.models import LLMCacheEntry

log = logging.getLogger("physreview.llm")


def lookup(*, key: str) -> "LLMCacheEntry | None":
    # Imported here so that importing physreview.llm never requires the app registry to be ready.
    from physreview.models import LLMCacheEntry

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
    """Keep a successful response; a storage failure is logged, never lost work for the caller."""
    from physreview.models import LLMCacheEntry

    try:
        # A savepoint, so a failed insert cannot break the caller's surrounding transaction.
        with transaction.atomic():
            LLMCacheEntry.objects.get_or_create(
                request_hash=key,
                defaults={
                    "base_url": base_url[:500],
                    "model": model[:200],
                    "request": request,
                    "response": response,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "cost_usd": None if cost_usd is None else Decimal(str(cost_usd)),
                },
            )
    except DatabaseError as exc:
        log.warning("LLM cache: could not store response %s: %s", key[:12], type(exc).__name__)
