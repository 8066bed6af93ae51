"""Results of the rubric compiler: per language (:class:`Candidate` / :class:`Skip`), per item (:class:`Compiled`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Bump when a rule changes what it derives: stored suggestions of another version are recompiled.
COMPILER_VERSION = (
    "rubric-compiler-5"  # 2: release grammar (issue 33); 3: subject slots; 4: all_of, unit forms; 5: grammar 3
)


@dataclass(frozen=True)
class Candidate:
    """What one language's wording compiles to."""

    check: dict[str, Any]
    rule: str  # e.g. "value_unit", "term/entity", "must_not_recommend/action", "write_call/param"
    confidence: float
    explanation: str


@dataclass(frozen=True)
class Skip:
    """The wording matched a pattern that cannot be checked by machine (or matched none)."""

    reason: str  # short bucket for reports: "judgement", "partial", "several values", "no pattern", ...
    explanation: str


@dataclass(frozen=True)
class Compiled:
    check: dict[str, Any]
    rule: str
    confidence: float
    explanation: str
    languages: tuple[str, ...]  # the texts whose wording supports the check
    version: str = COMPILER_VERSION


@dataclass(frozen=True)
class Outcome:
    """An item's compilation: the check (or None) and, when None, why (``reason`` is the report bucket)."""

    compiled: Compiled | None
    reason: str
    explanation: str
    per_language: dict[str, Candidate | Skip] = field(default_factory=dict)
