"""The review queue and the review screen (one turn in its session, evidence, actions panel)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.utils.html import escape
from django.utils.translation import get_language
from django.views.decorators.cache import never_cache

from annotations import blind, review_context, selectors
from annotations.roles import is_adjudicator
from annotations.services.confirmation import confirmation_queue
from annotations.templatetags.review_extras import pretty_json
from annotations.views.common import turn_for, visible_turns
from annotations.views.done import undo_offer
from annotations.views.panel import actions_context, lease_context
from core.cacheredis import read_ahead
from scenarios.models import GoldStep, Turn


@never_cache  # Back after a decision must not show the old state with live buttons
@login_required
def queue(request: HttpRequest) -> HttpResponse:
    adjudication = list(selectors.adjudication_queue()) if is_adjudicator(request.user) else None
    confirmation = list(confirmation_queue()) if is_adjudicator(request.user) else None
    return render(
        request,
        "annotations/queue.html",
        {
            "turns": list(selectors.review_queue(user=request.user)),
            "adjudication": adjudication,
            "confirmation": confirmation,
            **undo_offer(request),
        },
    )


FINISHED_PARAM = "finished"  # ?finished=1: `j`/`k` step through finished turns too (the visible toggle)


def _with_neighbours(user: Any, turns: QuerySet[Turn]) -> QuerySet[Turn]:
    """``turns`` annotated with the previous and next turn the user may open (by record id, then index):
    ``prev_pk``/``next_pk`` over every visible turn, ``prev_pending``/``next_pending`` over the user's pending
    turns only (`j`/`k` for a reviewer). Scalar subqueries in the turn's own query: this screen is the most
    requested page, and a separate query cost as much as the rest of its reads. (Not a UNION of two
    sliced queries: SQLite, the demo database, refuses LIMIT there.)"""
    record_id, index = OuterRef("session__record_id"), OuterRef("index")
    visible = visible_turns(user)
    pending = visible.filter(selectors.pending_filter(user=user))
    after = Q(session__record_id__gt=record_id) | Q(session__record_id=record_id, index__gt=index)
    before = Q(session__record_id__lt=record_id) | Q(session__record_id=record_id, index__lt=index)

    def first(rows: QuerySet[Turn], where: Q, *order: str) -> Subquery:
        return Subquery(rows.filter(where).order_by(*order).values("pk")[:1])

    return turns.annotate(
        prev_pk=first(visible, before, "-session__record_id", "-index"),
        next_pk=first(visible, after, "session__record_id", "index"),
        prev_pending=first(pending, before, "-session__record_id", "-index"),
        next_pending=first(pending, after, "session__record_id", "index"),
    )


@never_cache  # Back after a decision must not show the old state with live buttons
@login_required
def review_turn(request: HttpRequest, pk: int) -> HttpResponse:
    # Steps and rubric are read only if the cached content cards or editor must be rendered anew; the
    # lease (and its holder) comes with the turn: one round trip less on the most requested page.
    turns = review_context.with_context(visible_turns(request.user), content=False).select_related("lease__holder")
    turn = get_object_or_404(_with_neighbours(request.user, turns), pk=pk)
    language = get_language() or "en"
    with read_ahead(review_context.cache_keys(turn=turn, language=language)):
        return render(request, "annotations/review.html", _review_context(request, turn, language=language))


def _review_context(request: HttpRequest, turn: Turn, *, language: str) -> dict[str, Any]:
    seen = blind.visibility(turn=turn, user=request.user)  # reviews, comments and lease banner: read once
    reviews = seen.reviews
    # Everyone sees their own review (adjudicators see all): absent from the list, they have none.
    my_review = next((r for r in reviews if r.reviewer_id == request.user.pk), None)
    try:
        lease = turn.lease
    except ObjectDoesNotExist:
        lease = None
    # A reviewer steps through what is still waiting for them; finished turns only behind the toggle.
    pending_only = seen.assigned and not request.GET.get(FINISHED_PARAM)
    return {
        **review_context.turn_context(turn=turn),
        "reviews": reviews,
        "prev": turn.prev_pending if pending_only else turn.prev_pk,
        "next": turn.next_pending if pending_only else turn.next_pk,
        "pending_only": pending_only,
        "finished_toggle": seen.assigned,
        "restored": True,  # a draft shown on opening the turn was restored, not just saved
        "guideline": selectors.guideline_for(language=language),
        **undo_offer(request),
        **actions_context(
            request,
            turn,
            my_review=my_review,
            assigned=seen.assigned,
            review_known=True,
            hidden=seen.hidden,
            **lease_context(turn=turn, user=request.user, lease=lease, hidden=seen.hidden),
        ),
    }


@login_required
def step_raw(request: HttpRequest, pk: int) -> HttpResponse:
    """The stored observation of step ``?step=<idx>`` as indented JSON (escaped), for the review screen's
    "Raw JSON" details; the same visibility as the turn (404 otherwise)."""
    turn = turn_for(request, pk, light=True)
    try:
        idx = int(request.GET.get("step", ""))
    except ValueError:
        return HttpResponseBadRequest("step (a step index) missing")
    step = get_object_or_404(GoldStep.objects.only("observation"), turn_id=turn.pk, idx=idx)
    return HttpResponse(escape(pretty_json(step.observation)), content_type="text/html; charset=utf-8")
