"""The session context every tool runs in, and the one date-cutoff rule.

Cutoff rule (used by every tool, nowhere else restated; it is the released benchmark's): a session's
``current_date`` is the day the physician is working on, and nothing of that day is charted yet. A
record is visible iff its timestamp is strictly before 00:00 (UTC; MIMIC clock times are stored as UTC
wall time) of ``current_date``. Date-only columns (``dod``, ``chartdate``) are visible iff
``date < current_date``, which is the same rule. Which timestamp a record is judged by:

* events (labs, vitals, emar, notes, procedures): the time they were charted;
* admissions: ``admittime``; the discharge/death time is shown only once it is itself visible;
* prescriptions: ``starttime`` (a stop time after the cutoff is not shown: the order is active);
* ICD diagnoses (no own time): the admission's ``admittime``;
* microbiology: the specimen is visible from its charttime; organisms and susceptibilities only
  from their ``storetime``/``storedate`` (before that the result is reported as pending);
* a patient's death: only if ``dod < current_date``.

Bounds modes (``ToolContext.bounds``):

* ``strict`` (default): the rule above for every tool.
* ``release``: what the released PhysAssistBench tool layer did, for reproducing its numbers:
  only ``Observation.search`` is bounded by time (and its ``date_to`` excludes its own day, as the
  release's text comparison ``charttime <= 'YYYY-MM-DD'`` does); every other tool sees everything of
  the patient it is asked for, e.g. the stay's discharge note written after the current date. Within
  Observation.search the ICU vitals are not bounded either (the release's vitals search ignores the dates
  and hadm_id). Statuses follow the release's rules (issue 33): an order with a start and a stop time is
  ``completed``, an emar row ``completed``, an admission ``finished``, a care plan ``completed``; strict
  statuses are relative to ``current_date``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

_DAY = dt.timedelta(days=1)
BOUNDS = ("strict", "release")
TIME_BOUNDED_IN_RELEASE = frozenset({"Observation.search"})
# Stands for "no time bound": queries keep their ``< cutoff`` filter, which then passes every row.
_UNBOUNDED = dt.datetime(9999, 12, 31, tzinfo=dt.UTC)


def visibility_cutoff(current_date: dt.date) -> dt.datetime:
    """First instant that is hidden: 00:00 (UTC) of ``current_date``."""
    return dt.datetime.combine(current_date, dt.time.min, tzinfo=dt.UTC)


def check_bounds(bounds: str) -> str:
    if bounds not in BOUNDS:
        raise ValueError(f"bounds must be one of {', '.join(BOUNDS)}, got {bounds!r}")
    return bounds


@dataclass(frozen=True)
class ToolContext:
    """What the harness knows about the session; ``subject_id`` fills a missing ``subject_id`` argument.

    ``hadm_id`` is informational (write tools default their encounter to it); searches never
    restrict themselves to it silently, since an assistant may legitimately look at prior admissions.
    ``time_bounded`` is set per call by :func:`ehr.fhir.execute.execute_tool` from ``bounds``.
    """

    current_date: dt.date
    subject_id: int | None = None
    hadm_id: int | None = None
    session_id: str | None = None
    bounds: str = "strict"
    time_bounded: bool = True

    def __post_init__(self) -> None:
        check_bounds(self.bounds)

    @classmethod
    def for_session(cls, session: Any, *, bounds: str = "strict") -> ToolContext:
        """The context of a session: anything with ``current_date``, ``subject_id``, ``hadm_id`` and
        ``session_id`` (a ``scenarios.Session`` row or an evaluation ``EvalSession``)."""
        return cls(
            current_date=session.current_date,
            subject_id=session.subject_id,
            hadm_id=session.hadm_id,
            session_id=session.session_id,
            bounds=bounds,
        )

    def for_tool(self, name: str) -> ToolContext:
        """The context one tool runs in: under ``release`` only Observation.search is time-bounded."""
        bounded = self.bounds == "strict" or name in TIME_BOUNDED_IN_RELEASE
        return self if bounded == self.time_bounded else replace(self, time_bounded=bounded)

    # Cached (per instance: ``replace`` makes a new one): a search reads them once or twice per row.
    @cached_property
    def now(self) -> dt.datetime:
        """The reference instant for statuses (active, in progress): the start of ``current_date``."""
        return visibility_cutoff(self.current_date)

    @cached_property
    def cutoff(self) -> dt.datetime:
        """First hidden instant; far in the future for a tool not time-bounded (``release`` bounds)."""
        return self.now if self.time_bounded else _UNBOUNDED

    @property
    def release_dates(self) -> bool:
        """``date_to`` read as the release's text comparison (its own day excluded)."""
        return self.bounds == "release"

    def time_visible(self, value: dt.datetime | None) -> bool:
        return value is not None and _aware(value) < self.cutoff

    def date_visible(self, value: dt.date | None) -> bool:
        return value is not None and (not self.time_bounded or value < self.current_date)

    def has_passed(self, value: dt.datetime | None) -> bool:
        """Whether ``value`` lies before "today" (an order's stop time), whatever the bounds."""
        return value is not None and _aware(value) < self.now

    @property
    def last_visible_date(self) -> dt.date:
        return self.current_date - _DAY if self.time_bounded else _UNBOUNDED.date()


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def fmt_datetime(value: dt.datetime | dt.date | None) -> str | None:
    """MIMIC-style ``YYYY-MM-DD HH:MM:SS`` (UTC wall time), as in the released sessions."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        # Naive values are UTC wall time already, and PostgreSQL hands back UTC: only another zone is converted.
        if value.tzinfo is not None and value.tzinfo is not dt.UTC:
            value = value.astimezone(dt.UTC)
        # isoformat is several times cheaper than strftime and the same text from year 1000 on (strftime's %Y
        # does not pad earlier years); [:19] drops an offset
        return value.isoformat(" ", "seconds")[:19] if value.year >= 1000 else value.strftime("%Y-%m-%d %H:%M:%S")
    return value.isoformat()


def fmt_date(value: dt.date | dt.datetime | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return _aware(value).astimezone(dt.UTC).date().isoformat()
    return value.isoformat()


def day_start(value: dt.date) -> dt.datetime:
    return dt.datetime.combine(value, dt.time.min, tzinfo=dt.UTC)


def time_window(
    *, context: ToolContext, date_from: dt.date | None, date_to: dt.date | None
) -> tuple[dt.datetime | None, dt.datetime]:
    """``[start, end)`` for a search: ``date_to`` is inclusive of its whole day, capped by the cutoff.

    Under ``release`` bounds ``date_to`` excludes its own day, as the released text comparison does.
    """
    end = context.cutoff
    if date_to is not None:
        last = day_start(date_to) if context.release_dates else day_start(date_to) + _DAY
        end = min(end, last)
    return (day_start(date_from) if date_from is not None else None), end


def date_window(
    *, context: ToolContext, date_from: dt.date | None, date_to: dt.date | None
) -> tuple[dt.date | None, dt.date]:
    """Inclusive ``[first, last]`` dates for date-only columns, capped by the last visible date."""
    last = context.last_visible_date if date_to is None else min(date_to, context.last_visible_date)
    return date_from, last
