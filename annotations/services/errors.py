"""Errors the review services raise; views turn them into messages (PermissionDenied → 403)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import PermissionDenied
from django.utils.translation import ngettext

from annotations.diffs import FieldDiff

__all__ = ["Conflict", "DraftConflict", "InvalidState", "LeaseHeld", "PermissionDenied"]


class LeaseHeld(Exception):
    """Another user holds a live lease on the turn."""

    def __init__(self, *, holder: str, expires_at: dt.datetime) -> None:
        self.holder = holder
        self.expires_at = expires_at
        super().__init__(f"turn is being edited by {holder} until {expires_at:%Y-%m-%d %H:%M:%S %Z}")


class InvalidState(Exception):
    """The turn is not in a state that allows the action (e.g. adjudicating an approved turn)."""


@dataclass
class Conflict(Exception):
    """A save started from ``base_version`` but the turn is at ``current_version``.

    Nothing is lost: the attempted values are stored as ``Revision(kind="conflict")`` rows
    (``revision_ids``) before this is raised. ``mine`` and ``current`` are full content snapshots,
    ``diffs`` the field-level differences between them (current → mine) for the fields the user changed.
    """

    base_version: int
    current_version: int
    mine: dict[str, Any]
    current: dict[str, Any]
    diffs: list[FieldDiff] = field(default_factory=list)
    revision_ids: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        return ngettext(
            "The turn changed since version %(base)s (now %(current)s); %(n)s field of yours is kept for merging.",
            "The turn changed since version %(base)s (now %(current)s); %(n)s fields of yours are kept for merging.",
            len(self.diffs),
        ) % {"base": self.base_version, "current": self.current_version, "n": len(self.diffs)}


class DraftConflict(Conflict):
    """A reviewer's draft save from a screen showing an older state of the same draft (another tab
    saved since): ``current`` is the newer draft, ``mine`` the stale screen's values laid over it.
    Nothing is stored; the screen offers the merge."""

    is_draft = True  # templates: the merge form carries the draft token

    def __str__(self) -> str:
        return ngettext(
            "Your draft was saved elsewhere (another tab?) since this page showed it; %(n)s field to merge.",
            "Your draft was saved elsewhere (another tab?) since this page showed it; %(n)s fields to merge.",
            len(self.diffs),
        ) % {"n": len(self.diffs)}
