"""The reviewer's "done" list and the short-lived "Undo" of a just-submitted review (after `a`)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotations import selectors
from annotations.models import Review
from annotations.services import InvalidState
from annotations.services.reviews import undo_blocker, undo_submission
from annotations.views.common import turn_for

UNDO_PARAM = "undo"  # ?undo=<turn pk>: the page offers to withdraw that turn's just-submitted review


@login_required
def done(request: HttpRequest) -> HttpResponse:
    reviews = list(selectors.done_reviews(user=request.user))
    return render(request, "annotations/done.html", {"reviews": reviews, **undo_offer(request)})


def undo_offer(request: HttpRequest) -> dict[str, Any]:
    """What ``?undo=<turn pk>`` says about the user's just-submitted review of that turn: ``submitted`` (the review:
    the page confirms what was submitted, with its quality gate warnings), ``undo`` (the same review while it may
    still be withdrawn) or ``undo_blocked`` (why not, e.g. the last co-review completed the turn)."""
    try:
        turn_id = int(request.GET.get(UNDO_PARAM, ""))
    except ValueError:
        return {}
    review = (
        Review.objects.filter(turn_id=turn_id, reviewer_id=request.user.pk, submitted_at__isnull=False)
        .select_related("turn__session")
        .only(
            "pk",
            "submitted_at",
            "decision",
            "reject_reason",
            "gate_warnings",
            "turn__id",
            "turn__index",
            "turn__status",
            "turn__session__record_id",
        )
        .first()
    )
    if review is None:
        return {}
    blocked = undo_blocker(review=review, turn_status=review.turn.status)
    return {"submitted": review, "undo": None if blocked else review, "undo_blocked": blocked}


def next_queued(*, user: Any, after: int) -> str:
    """The review screen of the user's next pending turn after ``after`` (the queue when none is left), offering
    undo of ``after``."""
    nxt = selectors.next_pending(user=user, after=after)
    target = reverse("annotations:turn", args=[nxt]) if nxt else reverse("annotations:queue")
    return f"{target}?{UNDO_PARAM}={after}"


def _local(request: HttpRequest, url: str) -> str:
    """``url`` if it is a path (or URL) of this site, else "" (no open redirect: issue 36 F9)."""
    allowed = url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return url if url and allowed else ""


@login_required
@require_POST
def undo(request: HttpRequest, pk: int) -> HttpResponse:
    """Withdraw the just-submitted review of turn ``pk`` and go back to it (editable again)."""
    turn = turn_for(request, pk, light=True)
    try:
        undo_submission(turn=turn, reviewer=request.user)
    except InvalidState as exc:
        messages.error(request, str(exc))
        return redirect(_local(request, request.POST.get("back", "")) or reverse("annotations:done"))
    messages.success(request, _("Your decision was withdrawn: the turn is back in your queue."))
    return redirect("annotations:turn", pk=turn.pk)
