"""Send a curated turn back to review, when a physician finds the task itself at fault (evaluation.faults).

The turn's reviewers review it again from scratch, blind as before: their earlier reviews are removed (the
revision that records the reopening lists who decided what), its status returns to ``in_review`` so the queues
offer it, and a comment tells the reviewers why. Snapshots already frozen keep the old version; the next
snapshot takes the turn only once it is approved again.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from annotations.models import Comment, Review, Revision, RevisionKind, TurnState
from annotations.services.reviews import REVIEWABLE
from scenarios.models import Turn


def reopen_for_review(*, turn: Turn, author: Any, reason: str) -> bool:
    """Returns False when the turn is already open for review (nothing to do but the comment)."""
    with transaction.atomic():
        locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
        Comment.objects.create(turn=locked, author=author, text=reason)
        if locked.status in REVIEWABLE:
            return False
        earlier = [
            f"{r.reviewer.get_username()}: {r.decision}"
            for r in Review.objects.filter(turn=locked).select_related("reviewer")
        ]
        Review.objects.filter(turn=locked).delete()
        before = locked.status
        locked.status = TurnState.IN_REVIEW
        locked.save(update_fields=["status"])
        Revision.objects.create(
            turn=locked,
            field="status",
            before=before,
            after=TurnState.IN_REVIEW,
            author=author,
            reason=f"reopened for review: {reason} (earlier reviews: {', '.join(earlier) or 'none'})",
            kind=RevisionKind.SYSTEM,
            version=locked.version,
        )
    turn.status = locked.status
    return True
