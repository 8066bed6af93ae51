"""Thread-safe sum of tokens, cost and latency over the calls of a run, and per-thread call logs.

:func:`track_calls` collects every call the clients make in the current thread while it is open, so a
caller can attribute calls to a unit of work (a judged turn, a played turn) without access to the
client: ``with track_calls() as log: judge.judge(...)`` then ``log.usage()``.
"""

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from core.llm.result import ChatResult


@dataclass(frozen=True, kw_only=True)
class UsageTotals:
    calls: int
    cache_hits: int
    prompt_tokens: int  # spent by calls that reached the endpoint
    completion_tokens: int
    total_tokens: int
    cached_tokens: int  # total tokens of responses served from our cache (cost nothing this run)
    known_cost_usd: float
    unknown_cost_calls: int  # calls whose model has no price: the run's cost is then unknown
    saved_cost_usd: float  # what the cache hits cost when first fetched (known prices only)
    latency_s: float
    attempts: int

    @property
    def cost_usd(self) -> float | None:
        """Total cost, or ``None`` if any paid call had an unknown price (never silently 0)."""
        return None if self.unknown_cost_calls else round(self.known_cost_usd, 10)

    def as_dict(self) -> dict[str, float | int | None]:
        """JSON-ready summary, e.g. for a run's stored totals."""
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
            "cost_usd": self.cost_usd,
            "known_cost_usd": round(self.known_cost_usd, 10),
            "unknown_cost_calls": self.unknown_cost_calls,
            "saved_cost_usd": round(self.saved_cost_usd, 10),
            "latency_s": round(self.latency_s, 6),
            "attempts": self.attempts,
        }


class UsageAccumulator:
    """Add :class:`ChatResult` objects from any thread; read :meth:`totals` at any time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = _empty()

    def __repr__(self) -> str:
        return f"UsageAccumulator({self.totals()!r})"

    def add(self, result: ChatResult) -> None:
        usage = result.usage
        tokens = (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) if usage else (0, 0, 0)
        with self._lock:
            t = self._totals
            if result.cached:
                self._totals = replace(
                    t,
                    calls=t.calls + 1,
                    cache_hits=t.cache_hits + 1,
                    cached_tokens=t.cached_tokens + tokens[2],
                    saved_cost_usd=t.saved_cost_usd + (result.original_cost_usd or 0.0),
                    latency_s=t.latency_s + result.latency_s,
                )
                return
            self._totals = replace(
                t,
                calls=t.calls + 1,
                prompt_tokens=t.prompt_tokens + tokens[0],
                completion_tokens=t.completion_tokens + tokens[1],
                total_tokens=t.total_tokens + tokens[2],
                known_cost_usd=t.known_cost_usd + (result.cost_usd or 0.0),
                unknown_cost_calls=t.unknown_cost_calls + (result.cost_usd is None),
                latency_s=t.latency_s + result.latency_s,
                attempts=t.attempts + result.attempts,
            )

    def totals(self) -> UsageTotals:
        with self._lock:
            return self._totals


def _empty() -> UsageTotals:
    return UsageTotals(
        calls=0,
        cache_hits=0,
        prompt_tokens=0,
        completion_tokens=0,
        total_tokens=0,
        cached_tokens=0,
        known_cost_usd=0.0,
        unknown_cost_calls=0,
        saved_cost_usd=0.0,
        latency_s=0.0,
        attempts=0,
    )


@dataclass(kw_only=True)
class CallLog:
    """Calls made in one thread while :func:`track_calls` was open (successful and failed)."""

    results: list[ChatResult] = field(default_factory=list)
    failures: int = 0
    failed_s: float = 0.0  # time spent in calls that raised (their backoff included)
    backoff_s: float = 0.0  # time slept between attempts, over all calls

    def usage(self) -> UsageTotals:
        accumulator = UsageAccumulator()
        for result in self.results:
            accumulator.add(result)
        return accumulator.totals()

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            **self.usage().as_dict(),
            "failed_calls": self.failures,
            "failed_s": round(self.failed_s, 6),
            "backoff_s": round(self.backoff_s, 6),
        }


_local = threading.local()


@contextlib.contextmanager
def track_calls() -> Iterator[CallLog]:
    """Collect the calls of this thread until the block ends (blocks may nest: each sees its calls)."""
    log = CallLog()
    stack = _stack()
    stack.append(log)
    try:
        yield log
    finally:
        stack.remove(log)


def note_result(result: ChatResult, *, backoff_s: float) -> None:
    for log in _stack():
        log.results.append(result)
        log.backoff_s += backoff_s


def note_failure(*, elapsed_s: float, backoff_s: float) -> None:
    for log in _stack():
        log.failures += 1
        log.failed_s += elapsed_s
        log.backoff_s += backoff_s


def _stack() -> list[CallLog]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack
