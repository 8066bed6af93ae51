"""Why generation attempts were rejected: flat per-attempt records for the run, and their summary.

Pure values (no models): ``scenarios.services`` stores the records on ``GenerationRun.rejections``, the
``generate`` command prints :func:`summarize` of them. A record is
``{"index", "attempt", "gate", "turn", "message"}`` (``attempt`` counts from 1).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from scenarios.generation.types import GenerationOutcome

STORED_MESSAGE_CHARS = 2000  # a reason is for a person; a whole echoed reply is not
SHOWN_REASONS = 3
SHOWN_CHARS = 320


def shorten(text: str, *, limit: int) -> str:
    """``text`` on one line, cut at a word boundary near ``limit`` characters (the cut is marked)."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut + "…"


def attempt_records(*, outcome: GenerationOutcome, index: int) -> list[dict[str, Any]]:
    """One record per failure of every rejected attempt of a slot's outcome."""
    return [
        {
            "index": index,
            "attempt": number,
            "gate": failure.gate,
            "turn": failure.turn,
            "message": shorten(failure.message, limit=STORED_MESSAGE_CHARS),
        }
        for number, failures in enumerate(outcome.rejected_attempts, start=1)
        for failure in failures
    ]


@dataclass(frozen=True, kw_only=True)
class GateSummary:
    gate: str
    attempts: int  # rejected attempts in which this gate failed
    failures: int
    reasons: list[str]  # the first distinct messages, shortened


def summarize(
    *, rejections: list[dict[str, Any]], shown: int = SHOWN_REASONS, width: int = SHOWN_CHARS
) -> list[GateSummary]:
    """Per gate, most failed attempts first (then by name): counts and the first ``shown`` distinct reasons."""
    attempts: dict[str, set[tuple[int, int]]] = defaultdict(set)
    failures: dict[str, int] = defaultdict(int)
    reasons: dict[str, list[str]] = defaultdict(list)
    seen: dict[str, set[str]] = defaultdict(set)
    for record in sorted(rejections, key=lambda r: (r["index"], r["attempt"])):
        gate = record["gate"]
        attempts[gate].add((record["index"], record["attempt"]))
        failures[gate] += 1
        # Distinct by message: the same problem on another turn or slot is not a new reason.
        if record["message"] not in seen[gate] and len(reasons[gate]) < shown:
            seen[gate].add(record["message"])
            reasons[gate].append(shorten(_located(record), limit=width))
    order = sorted(attempts, key=lambda g: (-len(attempts[g]), g))
    return [GateSummary(gate=g, attempts=len(attempts[g]), failures=failures[g], reasons=reasons[g]) for g in order]


def _located(record: dict[str, Any]) -> str:
    return record["message"] if record.get("turn") is None else f"turn {record['turn']}: {record['message']}"


def attempt_lines(*, rejections: list[dict[str, Any]], width: int = SHOWN_CHARS) -> list[str]:
    """One line per failure, by slot and attempt (``generate -v 2``)."""
    return [
        f"slot {r['index']} attempt {r['attempt']}: {r['gate']} — {shorten(_located(r), limit=width)}"
        for r in sorted(rejections, key=lambda r: (r["index"], r["attempt"]))
    ]
