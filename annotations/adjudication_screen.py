"""What the adjudication screen shows about reviews A and B: the content each would write, a side-by-side
diff against the current content, and what "take A/B" would do, in words.

The wording follows :func:`annotations.services.adjudication.adjudicate`: taking a review writes its
proposed changes (laid over the current content) *and* takes its decision and reject reason, so a rejection
with edits both rejects the turn and writes the edits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotations import content as tc
from annotations import diffs
from annotations.models import Decision, Review
from annotations.services.adjudication import reviews_ab
from scenarios.models import Turn


@dataclass(frozen=True)
class Take:
    """The "take review <label>" button: its text and the consequence shown under it."""

    label: str
    button: str
    consequence: str


def proposed_content(*, current: dict[str, Any], review: Review) -> dict[str, Any]:
    """The content taking ``review`` writes: its changes (relative to its base) laid over ``current``."""
    changes = tc.changes_between(base=review.base_content or current, proposed=review.proposed or {})
    return tc.apply_changes(base=current, changes=changes)


def take(*, label: str, decision: str, reject_reason: str, changes: int) -> Take:
    """Button text and consequence of taking a review with ``decision``, ``reject_reason`` (its display
    text) and ``changes`` changed fields."""
    if decision == Decision.APPROVE:
        if not changes:
            return Take(
                label,
                _("Take review %(label)s: approve without changes") % {"label": label},
                _("If taken: the turn will be approved as it is."),
            )
        return Take(
            label,
            ngettext(
                "Take review %(label)s: approve with %(n)s change",
                "Take review %(label)s: approve with %(n)s changes",
                changes,
            )
            % {"label": label, "n": changes},
            ngettext(
                "If taken: the turn will be approved, with this review's %(n)s change written to it.",
                "If taken: the turn will be approved, with this review's %(n)s changes written to it.",
                changes,
            )
            % {"n": changes},
        )
    if decision == Decision.REJECT:
        button = _("Take review %(label)s: reject (%(reason)s)") % {"label": label, "reason": reject_reason}
        if not changes:
            return Take(label, button, _("If taken: the turn will be rejected; its content stays as it is."))
        return Take(
            label,
            button,
            ngettext(
                "If taken: the turn will be rejected, with this review's %(n)s change written to it.",
                "If taken: the turn will be rejected, with this review's %(n)s changes written to it.",
                changes,
            )
            % {"n": changes},
        )
    return Take(label, _("Take review %(label)s") % {"label": label}, "")


def screen(*, turn: Turn) -> dict[str, Any]:
    """``columns`` (label, review, field diffs, take), ``takes`` (label → the content taking it writes),
    ``diff_rows`` (side by side, see :func:`annotations.diffs.side_by_side`) and ``current``."""
    current = tc.snapshot(turn=turn)
    columns, takes = [], {}
    for label, review in zip(("A", "B"), reviews_ab(turn=turn), strict=True):
        if review is None:
            continue
        theirs = takes[label] = proposed_content(current=current, review=review)
        changed = diffs.diff_content(current, theirs)
        columns.append(
            {
                "label": label,
                "review": review,
                "diffs": changed,
                "take": take(
                    label=label,
                    decision=review.decision,
                    reject_reason=str(review.get_reject_reason_display()),
                    changes=len(changed),
                ),
            }
        )
    return {"current": current, "columns": columns, "takes": takes, "diff_rows": diffs.side_by_side(current, takes)}
