"""Adjudication screen: the turn's clinical context, both reviews side by side against the current content;
take A, take B, merge field by field, or edit."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache

from annotations import adjudication_queue, adjudication_screen, review_context, selectors, services
from annotations import content as tc
from annotations.models import Chosen, Decision, RejectReason, TurnState
from annotations.roles import is_adjudicator
from annotations.views.common import posted_version
from annotations.views.editor_form import changes_from_post, editor_fields
from annotations.views.panel import keep_form_in_place
from scenarios.models import Turn


def _adjudicable_turn(request: HttpRequest, pk: int, *, with_context: bool = False) -> Turn:
    """A turn for the adjudication screen: adjudicators/admins only (everyone else gets a 404).
    ``with_context``: loaded for the clinical context cards (the GET page)."""
    if not is_adjudicator(request.user):
        raise Http404("not an adjudicator")
    turns = Turn.objects.select_related("session")
    return get_object_or_404(review_context.with_context(turns) if with_context else turns, pk=pk)


def _context(turn: Turn, **extra: Any) -> dict[str, Any]:
    """The adjudication section (both reviews, side-by-side diffs, take buttons, merge form)."""
    shown = adjudication_screen.screen(turn=turn)
    pending = turn.status == TurnState.NEEDS_ADJUDICATION
    if not pending:  # resolved (here or elsewhere): offer the next turn of the adjudication queue
        extra.setdefault("next_turn", adjudication_queue.next_turn(after=turn))
        extra.setdefault("queue_left", selectors.adjudication_queue().count())
    return {
        "turn": turn,
        **shown,
        "why": adjudication_queue.why(reviews=[column["review"] for column in shown["columns"]]) if pending else "",
        "pending": pending,
        "editor": editor_fields(shown["current"], takes=shown["takes"]),
        "reject_reasons": RejectReason.choices,
        **extra,
    }


@never_cache  # Back after a decision must not show the old state with live buttons
@login_required
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: both reviews with their diffs against the current content. POST (HTMX): take A/B, merge or edit."""
    if request.method == "GET":
        turn = _adjudicable_turn(request, pk, with_context=True)
        if turn.status != TurnState.NEEDS_ADJUDICATION:
            raise Http404("turn does not need adjudication")
        # Adjudicators see both reviews (no blind rule) and the turn's clinical context.
        context = {**review_context.turn_context(turn=turn), **_context(turn)}
        return render(request, "annotations/adjudicate.html", context)
    turn = _adjudicable_turn(request, pk)
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "POST"])
    chosen = request.POST.get("chosen", "")
    extra: dict[str, Any] = {}
    try:
        kwargs: dict[str, Any] = {
            "chosen": chosen,
            "base_version": posted_version(request),
            "reason": request.POST.get("reason", ""),
        }
        if chosen in (Chosen.EDITED, Chosen.MERGED):
            kwargs["content"] = changes_from_post(request.POST, start=tc.snapshot(turn=turn))
            kwargs["decision"] = request.POST.get("decision") or Decision.APPROVE
            kwargs["reject_reason"] = request.POST.get("reject_reason", "")
        adjudication = services.adjudicate(turn=turn, adjudicator=request.user, **kwargs)
        extra["message"] = adjudication_queue.resolved(turn=turn, adjudication=adjudication)
    except services.Conflict as conflict:
        extra.update(error=str(conflict), conflict=conflict)
    except tc.InvalidContent as exc:  # refused before anything was stored: the form keeps what was typed
        return keep_form_in_place(render(request, "annotations/_adjudication_error.html", {"error": str(exc)}))
    except (services.PermissionDenied, services.InvalidState, ValueError) as exc:
        extra["error"] = str(exc)
    turn = Turn.objects.select_related("session").get(pk=turn.pk)
    return render(request, "annotations/_adjudication.html", _context(turn, **extra))
