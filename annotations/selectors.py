"""Reads for the review screens: blind review visibility, queues, history, agreement input."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, Q, QuerySet

from annotations.models import Adjudication, Assignment, Review, Revision, RevisionKind, TurnState
from annotations.roles import is_adjudicator
from scenarios.models import Turn


def assigned_reviews(*, turn: Turn) -> list[Review]:
    """Submitted or not, the reviews of the reviewers assigned to the turn's session."""
    reviewers = Assignment.objects.filter(session_id=turn.session_id).values("reviewer_id")
    return list(Review.objects.filter(turn=turn, reviewer_id__in=reviewers).select_related("reviewer"))


def all_submitted(*, turn: Turn) -> bool:
    assigned = Assignment.objects.filter(session_id=turn.session_id).count()
    submitted = [r for r in assigned_reviews(turn=turn) if r.submitted]
    return assigned > 0 and len(submitted) == assigned


def visible_reviews(*, turn: Turn, user: Any) -> list[Review]:
    """The reviews of ``turn`` that ``user`` may see.

    Adjudicators and admins see all. A reviewer sees their own review, and the others only once every
    assigned review has been submitted (blind double review). Anyone else sees nothing.
    """
    reviews = (
        Review.objects.filter(turn=turn)
        .select_related("reviewer")
        .order_by(F("submitted_at").asc(nulls_last=True), "pk")
    )
    if is_adjudicator(user):
        return list(reviews)
    if not Assignment.objects.filter(session_id=turn.session_id, reviewer_id=user.pk).exists():
        return []
    if all_submitted(turn=turn):
        return list(reviews)
    return [r for r in reviews if r.reviewer_id == user.pk]


def review_queue(*, user: Any) -> QuerySet[Turn]:
    """Turns of the user's sessions still waiting for the user's submitted review."""
    done = Review.objects.filter(reviewer_id=user.pk, submitted_at__isnull=False).values("turn_id")
    return (
        Turn.objects.filter(
            session__assignments__reviewer_id=user.pk, status__in=[TurnState.DRAFT, TurnState.IN_REVIEW]
        )
        .exclude(pk__in=done)
        .select_related("session")
        .order_by("session__record_id", "index")
    )


def adjudication_queue() -> QuerySet[Turn]:
    return (
        Turn.objects.filter(status=TurnState.NEEDS_ADJUDICATION)
        .select_related("session")
        .order_by("session__record_id", "index")
    )


def history(*, turn: Turn, field: str | None = None, include_conflicts: bool = True) -> QuerySet[Revision]:
    """Revisions of a turn, oldest first, optionally of one flattened field (``answer_zh``, ``rubric.0.text_en``)."""
    rows = Revision.objects.filter(turn=turn).select_related("author").order_by("created", "pk")
    if field is not None:
        rows = rows.filter(Q(field=field))
    if not include_conflicts:
        rows = rows.exclude(kind=RevisionKind.CONFLICT)
    return rows


def submitted_reviews() -> QuerySet[Review]:
    """Every submitted review (agreement statistics read these)."""
    return Review.objects.filter(submitted_at__isnull=False).select_related("reviewer").order_by("turn_id", "pk")


def status_counts(*, by: str = "session__scenario") -> dict[Any, dict[str, int]]:
    """Turn counts per status grouped by a Turn lookup (``session__scenario``, ``session__tier``,
    ``session__assignments__reviewer__username``): ``{group: {status: n}}`` in one query."""
    rows = Turn.objects.values(by, "status").annotate(n=Count("pk", distinct=True)).order_by(by, "status")
    out: dict[Any, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row[by], {})[row["status"]] = row["n"]
    return out


def rejected_by_reason() -> dict[str, int]:
    """Final rejections per reason: the adjudicator's when adjudicated, else the reviewers' (first one)."""
    counts: dict[str, int] = {}
    adjudicated = Adjudication.objects.filter(decision="reject", turn__status=TurnState.REJECTED)
    seen = set()
    for turn_id, reason in adjudicated.order_by("turn_id", "-created").values_list("turn_id", "reject_reason"):
        if turn_id not in seen:
            seen.add(turn_id)
            counts[reason] = counts.get(reason, 0) + 1
    reviewed = submitted_reviews().filter(turn__status=TurnState.REJECTED, decision="reject").exclude(turn_id__in=seen)
    for turn_id, reason in reviewed.order_by("turn_id", "submitted_at").values_list("turn_id", "reject_reason"):
        if turn_id not in seen:
            seen.add(turn_id)
            counts[reason] = counts.get(reason, 0) + 1
    return counts
