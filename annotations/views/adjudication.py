"""Adjudication screen: both reviews with field-level diffs; take A, take B, merge field by field, or edit."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _

from annotations import content as tc
from annotations import diffs, services
from annotations.models import Chosen, Decision, RejectReason, TurnState
from annotations.roles import is_adjudicator
from annotations.services.adjudication import reviews_ab
from annotations.views.common import posted_version
from annotations.views.editor_form import changes_from_post, editor_fields
from scenarios.models import Turn


def _adjudicable_turn(request: HttpRequest, pk: int) -> Turn:
    """A turn for the adjudication screen: adjudicators/admins only (everyone else gets a 404)."""
    if not is_adjudicator(request.user):
        raise Http404("not an adjudicator")
    return get_object_or_404(Turn.objects.select_related("session"), pk=pk)


def _context(turn: Turn, **extra: Any) -> dict[str, Any]:
    current = tc.snapshot(turn=turn)
    columns, takes = [], {}
    for label, review in zip(("A", "B"), reviews_ab(turn=turn), strict=True):
        if review is None:
            continue
        # The proposal is relative to its base; laid over the current content it is what "take" writes.
        theirs = tc.apply_changes(
            base=current,
            changes=tc.changes_between(base=review.base_content or current, proposed=review.proposed or {}),
        )
        takes[label] = theirs
        columns.append({"label": label, "review": review, "diffs": diffs.diff_content(current, theirs)})
    return {
        "turn": turn,
        "columns": columns,
        "pending": turn.status == TurnState.NEEDS_ADJUDICATION,
        "editor": editor_fields(current, takes=takes),
        "reject_reasons": RejectReason.choices,
        **extra,
    }


@login_required
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: both reviews with their diffs against the current content. POST (HTMX): take A/B, merge or edit."""
    turn = _adjudicable_turn(request, pk)
    if request.method == "GET":
        if turn.status != TurnState.NEEDS_ADJUDICATION:
            raise Http404("turn does not need adjudication")
        return render(request, "annotations/adjudicate.html", _context(turn))
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
        services.adjudicate(turn=turn, adjudicator=request.user, **kwargs)
        extra["message"] = _("Adjudicated.")
    except services.Conflict as conflict:
        extra.update(error=str(conflict), conflict=conflict)
    except (services.PermissionDenied, services.InvalidState, ValueError) as exc:
        extra["error"] = str(exc)
    turn = Turn.objects.select_related("session").get(pk=turn.pk)
    return render(request, "annotations/_adjudication.html", _context(turn, **extra))
