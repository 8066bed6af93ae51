"""The review queue and the review screen (one turn in its session, evidence, actions panel)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch, Q
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.utils.functional import SimpleLazyObject
from django.utils.html import escape
from django.utils.translation import get_language

from annotations import selectors
from annotations.roles import is_adjudicator
from annotations.templatetags.review_extras import pretty_json
from annotations.views.common import SESSION_JSON, TURN_JSON, turn_for, visible_turns
from annotations.views.done import undo_offer
from annotations.views.panel import actions_context
from ehr.selectors import admission_evidence, admission_header
from scenarios.models import GoldStep, Turn

# How long a rendered evidence panel is reused (Django cache, keyed by admission, date and UI language).
# The record only changes on re-import; this bounds how long a re-imported record can show stale values.
EVIDENCE_CACHE_SECONDS = 300


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    adjudication = list(selectors.adjudication_queue()) if is_adjudicator(request.user) else None
    return render(
        request,
        "annotations/queue.html",
        {
            "turns": list(selectors.review_queue(user=request.user)),
            "adjudication": adjudication,
            **undo_offer(request),
        },
    )


# Earlier turns of the session are shown as texts only.
EARLIER_FIELDS = (
    "id",
    "session_id",
    "index",
    "task_type",
    "request_explicit_en",
    "request_explicit_zh",
    "answer_en",
    "answer_zh",
)


def _neighbours(user: Any, turn: Turn) -> tuple[int | None, int | None]:
    """Primary keys of the previous and next visible turn (by record id, then index)."""
    record_id, index = turn.session.record_id, turn.index
    turns = visible_turns(user)
    after = Q(session__record_id__gt=record_id) | Q(session__record_id=record_id, index__gt=index)
    before = Q(session__record_id__lt=record_id) | Q(session__record_id=record_id, index__lt=index)
    nxt = turns.filter(after).order_by("session__record_id", "index").values_list("pk", flat=True).first()
    prev = turns.filter(before).order_by("-session__record_id", "-index").values_list("pk", flat=True).first()
    return prev, nxt


@login_required
def review_turn(request: HttpRequest, pk: int) -> HttpResponse:
    # Steps and rubric of this turn only; the big JSON columns nobody reads here stay in the database.
    # The raw observation JSON is fetched when its <details> opens (step_raw), not printed inline.
    steps = Prefetch("steps", queryset=GoldStep.objects.defer("dependency_list", "extra"))
    turn = get_object_or_404(
        visible_turns(request.user)
        .select_related("session")
        .defer(*SESSION_JSON, *TURN_JSON)
        .prefetch_related(steps, "rubric_items"),
        pk=pk,
    )
    session = turn.session
    earlier = list(session.turns.filter(index__lt=turn.index).order_by("index").only(*EARLIER_FIELDS))
    prev, nxt = _neighbours(request.user, turn)
    reviews, assigned = selectors.review_visibility(turn=turn, user=request.user)
    # Everyone sees their own review (adjudicators see all): absent from the list, they have none.
    my_review = next((r for r in reviews if r.reviewer_id == request.user.pk), None)
    # A submission from this screen reloads it (HX-Refresh): its message and warnings are shown again.
    flash = [str(m) for m in messages.get_messages(request) if m.extra_tags == "review-submitted"]
    after_submit = {"message": flash[-1], "warnings": my_review.gate_warnings if my_review else []} if flash else {}
    context = {
        "session": session,
        "earlier": earlier,
        "steps": sorted(turn.steps.all(), key=lambda s: s.idx),
        "rubric": sorted(turn.rubric_items.all(), key=lambda r: r.idx),
        "patient_replies": [
            a for a in session.patient_agent_annotations or [] if isinstance(a, dict) and a.get("turn") == turn.index
        ],
        "reviews": reviews,
        "prev": prev,
        "next": nxt,
        "guideline": selectors.guideline_for(language=get_language() or "en"),
        **admission_header(subject_id=session.subject_id, hadm_id=session.hadm_id),
        # Read only when the template's evidence fragment is not cached (it is shared by every turn of the
        # session and every reviewer: the record at a given date does not change between imports).
        "EVIDENCE_CACHE_SECONDS": EVIDENCE_CACHE_SECONDS,
        "evidence": SimpleLazyObject(
            lambda: admission_evidence(hadm_id=session.hadm_id, current_date=session.current_date)
        ),
        **undo_offer(request),
        **actions_context(request, turn, my_review=my_review, assigned=assigned, review_known=True, **after_submit),
    }
    return render(request, "annotations/review.html", context)


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
