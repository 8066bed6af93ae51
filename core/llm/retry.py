"""Retry policy: which failures are retried and how long to wait before the next attempt."""

import email.utils
import math
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# 408 and 429 are the only 4xx worth repeating; any other 4xx is the request's fault.
RETRYABLE_4XX = frozenset({408, 429})
# A server that cannot parse the request (or the model's own output) gives the same answer every time,
# whatever the status: llama.cpp answers HTTP 500 "Failed to parse tool call arguments as JSON" when the
# history carries a truncated tool call, and "Failed to parse input" when the model's output does not fit
# its tool-call format.
_UNPARSEABLE = re.compile(
    r"(failed|unable|could ?n[o']t|cannot|can't) (to )?parse|parse error|parsing error|invalid json|"
    r"not valid json|malformed json|json (decode|parse) error",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0  # cap of the exponential backoff
    max_retry_after_s: float = 120.0  # cap of a server-requested wait

    def delay_s(
        self,
        *,
        retry_number: int,
        headers: Mapping[str, str] | None = None,
        rand: Callable[[], float] = random.random,
        now: Callable[[], float] = time.time,
    ) -> float:
        """Seconds to wait before retry ``retry_number`` (1-based).

        A ``Retry-After`` (seconds or HTTP-date) or ``retry-after-ms`` header is honoured, capped;
        otherwise exponential backoff with full jitter (uniform in [0, min(cap, base·2^(n-1))]),
        which spreads out many workers hitting the same rate limit.
        """
        requested = retry_after_s(headers=headers, now=now) if headers is not None else None
        if requested is not None:
            return min(requested, self.max_retry_after_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** min(retry_number - 1, 30))
        return rand() * ceiling


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_4XX or status >= 500


def says_unparseable(detail: str) -> bool:
    """Whether an error message says the request or the model's output could not be parsed (permanent)."""
    return bool(_UNPARSEABLE.search(detail or ""))


def is_retryable_failure(*, status: int, detail: str) -> bool:
    return is_retryable_status(status) and not says_unparseable(detail)


def retry_after_s(*, headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Server-requested wait in seconds from ``retry-after-ms`` or ``Retry-After``; ``None`` if absent/bad."""
    lower = {key.lower(): value for key, value in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        value = _finite_non_negative(raw_ms)
        if value is not None:
            return value / 1000
    raw = lower.get("retry-after")
    if raw is None:
        return None
    value = _finite_non_negative(raw)
    if value is not None:
        return value
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # HTTP-dates are GMT
        return None
    return max(0.0, when.timestamp() - now())


def _finite_non_negative(raw: str) -> float | None:
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
