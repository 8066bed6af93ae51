"""The session context every tool runs in, and the one date-cutoff rule.

Cutoff rule (used by every tool, nowhere else restated): a session's ``current_date`` is a whole
day that has fully happened. A record is visible iff its timestamp is strictly before midnight at
the start of the next day, i.e. ``time < current_date + 1 day`` (00:00 UTC; MIMIC clock times are
stored as UTC wall time). Date-only columns (``dod``, ``chartdate``) are visible iff
``date <= current_date``, which is the same rule. Which timestamp a record is judged by:

* events (labs, vitals, emar, notes, procedures): the time they were charted;
* admissions: ``admittime``; the discharge/death time is shown only once it is itself visible;
* prescriptions: ``starttime`` (a stop time after the cutoff is not shown: the order is active);
* ICD diagnoses (no own time): the admission's ``admittime``;
* microbiology: the specimen is visible from its charttime; organisms and susceptibilities only
  from their ``storetime``/``storedate`` (before that the result is reported as pending);
* a patient's death: only if ``dod <= current_date``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

_DAY = dt.timedelta(days=1)


def visibility_cutoff(current_date: dt.date) -> dt.datetime:
    """First instant that is hidden: midnight (UTC) after ``current_date``."""
    return dt.datetime.combine(current_date + _DAY, dt.time.min, tzinfo=dt.UTC)


@dataclass(frozen=True)
class ToolContext:
    """What the harness knows about the session; ``subject_id`` fills a missing ``patient`` argument.

    ``hadm_id`` is informational (write tools default their encounter to it); searches never
    restrict themselves to it silently, since an assistant may legitimately look at prior admissions.
    """

    current_date: dt.date
    subject_id: int | None = None
    hadm_id: int | None = None
    session_id: str | None = None

    @property
    def cutoff(self) -> dt.datetime:
        return visibility_cutoff(self.current_date)

    def time_visible(self, value: dt.datetime | None) -> bool:
        return value is not None and _aware(value) < self.cutoff

    def date_visible(self, value: dt.date | None) -> bool:
        return value is not None and value <= self.current_date


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def fmt_datetime(value: dt.datetime | dt.date | None) -> str | None:
    """MIMIC-style ``YYYY-MM-DD HH:MM:SS`` (UTC wall time), as in the released sessions."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return _aware(value).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
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
    """``[start, end)`` for a search: ``date_to`` is inclusive of its whole day, capped by the cutoff."""
    end = context.cutoff
    if date_to is not None:
        end = min(end, day_start(date_to) + _DAY)
    return (day_start(date_from) if date_from is not None else None), end


def date_window(
    *, context: ToolContext, date_from: dt.date | None, date_to: dt.date | None
) -> tuple[dt.date | None, dt.date]:
    """Inclusive ``[first, last]`` dates for date-only columns, capped by the current date."""
    last = context.current_date if date_to is None else min(date_to, context.current_date)
    return date_from, last
