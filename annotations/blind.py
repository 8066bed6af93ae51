"""Blind double review: what a user may learn about the other reviewers of a turn.

One rule, used by every screen and API route: adjudicators and admins see everything; a reviewer
sees the other assigned reviewers' names, decisions, reviews and comments on a turn only once every
assigned review of it is submitted. Until then another reviewer is "another reviewer".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils.translation import gettext as _

from annotations.models import Assignment, Comment, Review
from annotations.roles import is_adjudicator
from scenarios.models import Turn


def assigned_ids(*, turn: Turn) -> set[int]:
    return set(Assignment.objects.filter(session_id=turn.session_id).order_by().values_list("reviewer_id", flat=True))


def _revealed(assigned: set[int], reviews: list[Review]) -> bool:
    return bool(assigned) and assigned <= {r.reviewer_id for r in reviews if r.submitted}


def _hidden(assigned: set[int], reviews: list[Review], user: Any) -> frozenset[int]:
    """The rule itself: the other assigned reviewers, until every assigned review is submitted."""
    return frozenset() if _revealed(assigned, reviews) else frozenset(assigned - {user.pk})


@dataclass(frozen=True)
class Visibility:
    """What ``user`` may know of the reviews of one turn: the reviews they may see, whether they are an
    assigned reviewer (None for adjudicators and admins, not looked up) and the users hidden from them."""

    reviews: list[Review]
    assigned: bool | None
    hidden: frozenset[int]


def visibility(*, turn: Turn, user: Any) -> Visibility:
    """The blind rule for ``user`` on ``turn``, in two queries (reviews, assignments): a screen that shows
    reviews, comments and the lease banner reads it once."""
    reviews = list(
        Review.objects.filter(turn=turn)
        .select_related("reviewer")
        .order_by(F("submitted_at").asc(nulls_last=True), "pk")
    )
    if is_adjudicator(user):
        return Visibility(reviews=reviews, assigned=None, hidden=frozenset())
    assigned = assigned_ids(turn=turn)
    hidden = _hidden(assigned, reviews, user)
    if user.pk not in assigned:
        return Visibility(reviews=[], assigned=False, hidden=hidden)
    mine = reviews if _revealed(assigned, reviews) else [r for r in reviews if r.reviewer_id == user.pk]
    return Visibility(reviews=mine, assigned=True, hidden=hidden)


def revealed_turns(*, user: Any) -> QuerySet[Turn]:
    """The turns of ``user``'s sessions whose every assigned review is submitted (``user``'s included): the
    turns on which :func:`visibility` shows ``user`` the co-reviewers' work. One subquery, for aggregates."""
    unsubmitted = Assignment.objects.filter(session_id=OuterRef("session_id")).exclude(
        Exists(
            Review.objects.filter(
                turn_id=OuterRef(OuterRef("pk")), reviewer_id=OuterRef("reviewer_id"), submitted_at__isnull=False
            )
        )
    )
    return Turn.objects.filter(session__assignments__reviewer_id=user.pk).exclude(Exists(unsubmitted))


def visible_reviews_filter(*, user: Any) -> Q:
    """A :class:`Review` filter for aggregates shown to ``user`` (agreement, counts): the reviews the blind rule
    lets them see (their own, and every review of a revealed turn); everything for adjudicators and admins.
    A co-reviewer's submission moves a reviewer's figures only when it reveals the turn (issue 36, F3/F8)."""
    if is_adjudicator(user):
        return Q()
    return Q(reviewer_id=user.pk) | Q(turn_id__in=revealed_turns(user=user).values("pk"))


def review_visibility(*, turn: Turn, user: Any) -> tuple[list[Review], bool | None]:
    """``(reviews user may see, whether user is assigned to the turn's session)``: see :func:`visibility`."""
    seen = visibility(turn=turn, user=user)
    return seen.reviews, seen.assigned


def hidden_users(*, turn: Turn, user: Any) -> frozenset[int]:
    """Ids of the users whose identity and work on ``turn`` are hidden from ``user`` (may be empty); lighter
    than :func:`visibility` for screens that show no reviews."""
    if is_adjudicator(user):
        return frozenset()
    assigned = assigned_ids(turn=turn)
    reviews = list(Review.objects.filter(turn=turn, reviewer_id__in=assigned).only("reviewer_id", "submitted_at"))
    return _hidden(assigned, reviews, user)


def visible_comments(*, turn: Turn, user: Any, hidden: set[int] | frozenset[int] | None = None) -> list[Comment]:
    """The turn's comments, oldest first, without the co-reviewers' while the review is blind
    (``hidden``: :func:`hidden_users`, when the caller has it)."""
    comments = Comment.objects.filter(turn=turn).select_related("author")
    hidden = hidden_users(turn=turn, user=user) if hidden is None else hidden
    if hidden:
        comments = comments.exclude(author_id__in=hidden)
    return list(comments)


def user_label(*, turn: Turn, viewer: Any, other: Any, hidden: set[int] | frozenset[int] | None = None) -> str:
    """``other``'s username as ``viewer`` may see it on ``turn``: "another reviewer" while blind."""
    if other is None:
        return ""
    hidden = hidden_users(turn=turn, user=viewer) if hidden is None else hidden
    if other.pk != viewer.pk and other.pk in hidden:
        return _("another reviewer")
    return other.get_username()


def partner_label(*, index: int, count: int) -> str:
    """A reviewer's agreement partner, unnamed: reviewers never learn from the dashboard who reviewed
    with them (the name would tell them whose review is still pending on their open turns)."""
    return _("another reviewer") if count == 1 else _("another reviewer (%(n)s)") % {"n": index}
