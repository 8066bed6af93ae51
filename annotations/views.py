"""Review screens: thin views over annotations.services / selectors (object permissions in every view).

A user may open a turn when they are assigned to its session or are an adjudicator/admin; anyone
else gets a 404. Action endpoints answer HTMX posts with the actions panel (status 200 even for
errors and conflicts: htmx 2 does not swap 4xx responses), carrying an error banner when needed.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST

from annotations import agreement, diffs, selectors, services
from annotations import content as tc
from annotations.models import Chosen, Comment, Decision, RejectReason, Review, TurnState
from annotations.roles import is_adjudicator
from annotations.services.adjudication import reviews_ab
from annotations.services.reviews import is_assigned
from ehr.selectors import admission_evidence
from scenarios.models import Scenario, Turn

EDITABLE_TEXTS = (
    ("request_implicit_en", "Request (implicit) EN"),
    ("request_implicit_zh", "Request (implicit) ZH"),
    ("request_explicit_en", "Request (explicit) EN"),
    ("request_explicit_zh", "Request (explicit) ZH"),
    ("answer_en", "Gold answer EN"),
    ("answer_zh", "Gold answer ZH"),
)


def _visible_turns(user: Any):
    turns = Turn.objects.all()
    if not is_adjudicator(user):
        turns = turns.filter(session__assignments__reviewer_id=user.pk)
    return turns


def _turn_for(request: HttpRequest, pk: int) -> Turn:
    """The turn if the user may see it (assigned reviewer, adjudicator or admin), else 404."""
    return get_object_or_404(_visible_turns(request.user).select_related("session"), pk=pk)


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    adjudication = list(selectors.adjudication_queue()) if is_adjudicator(request.user) else None
    return render(
        request,
        "annotations/queue.html",
        {"turns": list(selectors.review_queue(user=request.user)), "adjudication": adjudication},
    )


def _neighbours(user: Any, turn: Turn) -> tuple[Turn | None, Turn | None]:
    record_id, index = turn.session.record_id, turn.index
    turns = _visible_turns(user).select_related("session").distinct()
    after = Q(session__record_id__gt=record_id) | Q(session__record_id=record_id, index__gt=index)
    before = Q(session__record_id__lt=record_id) | Q(session__record_id=record_id, index__lt=index)
    nxt = turns.filter(after).order_by("session__record_id", "index").first()
    prev = turns.filter(before).order_by("-session__record_id", "-index").first()
    return prev, nxt


def _actions_context(
    request: HttpRequest, turn: Turn, *, my_review: Review | None = None, **extra: Any
) -> dict[str, Any]:
    if my_review is None:
        my_review = Review.objects.filter(turn=turn, reviewer_id=request.user.pk).first()
    current = tc.snapshot(turn=turn)
    shown = my_review.proposed if my_review and my_review.proposed else current
    return {
        "turn": turn,
        "can_review": is_assigned(turn=turn, user=request.user),
        "my_review": my_review,
        "editable": [(name, label, shown.get(name, "")) for name, label in EDITABLE_TEXTS],
        "rubric_form": shown.get("rubric", []),
        "reject_reasons": RejectReason.choices,
        "comments": list(Comment.objects.filter(turn=turn).select_related("author")),
        **extra,
    }


@login_required
def review_turn(request: HttpRequest, pk: int) -> HttpResponse:
    turn = _turn_for(request, pk)
    session = turn.session
    turns = list(session.turns.order_by("index").prefetch_related("steps", "rubric_items"))
    turn = next(t for t in turns if t.pk == turn.pk)
    prev, nxt = _neighbours(request.user, turn)
    reviews = selectors.visible_reviews(turn=turn, user=request.user)
    my_review = next((r for r in reviews if r.reviewer_id == request.user.pk), None)
    context = {
        "session": session,
        "earlier": [t for t in turns if t.index < turn.index],
        "steps": sorted(turn.steps.all(), key=lambda s: s.idx),
        "rubric": sorted(turn.rubric_items.all(), key=lambda r: r.idx),
        "patient_replies": [
            a for a in session.patient_agent_annotations or [] if isinstance(a, dict) and a.get("turn") == turn.index
        ],
        "reviews": reviews,
        "prev": prev,
        "next": nxt,
        **admission_evidence(
            subject_id=turn.session.subject_id, hadm_id=turn.session.hadm_id, current_date=turn.session.current_date
        ),
        **_actions_context(request, turn, my_review=my_review),
    }
    return render(request, "annotations/review.html", context)


def _actions(request: HttpRequest, turn: Turn, **extra: Any) -> HttpResponse:
    turn.refresh_from_db(fields=["status", "version"])
    return render(request, "annotations/_actions.html", _actions_context(request, turn, **extra))


def _base_version(request: HttpRequest) -> int:
    try:
        return int(request.POST.get("base_version", ""))
    except ValueError:
        raise Http404("base_version missing") from None


def _submit(request: HttpRequest, turn: Turn, **kwargs: Any) -> HttpResponse:
    try:
        _, warnings = services.submit_review(
            turn=turn, reviewer=request.user, base_version=_base_version(request), **kwargs
        )
    except services.Conflict as conflict:
        return _actions(request, turn, error=str(conflict), conflict=conflict)
    except (services.PermissionDenied, services.InvalidState, ValueError) as exc:
        return _actions(request, turn, error=str(exc))
    return _actions(request, turn, message="Review submitted.", warnings=warnings)


@login_required
@require_POST
def approve(request: HttpRequest, pk: int) -> HttpResponse:
    turn = _turn_for(request, pk)
    return _submit(request, turn, decision=Decision.APPROVE, reason=request.POST.get("reason", ""))


@login_required
@require_POST
def reject(request: HttpRequest, pk: int) -> HttpResponse:
    turn = _turn_for(request, pk)
    return _submit(
        request,
        turn,
        decision=Decision.REJECT,
        reject_reason=request.POST.get("reject_reason", ""),
        reason=request.POST.get("reason", ""),
    )


@login_required
@require_POST
def comment(request: HttpRequest, pk: int) -> HttpResponse:
    turn = _turn_for(request, pk)
    try:
        services.add_comment(turn=turn, author=request.user, text=request.POST.get("text", ""))
    except (services.PermissionDenied, ValueError) as exc:
        return _actions(request, turn, error=str(exc))
    return _actions(request, turn, message="Comment added.")


def _proposed(request: HttpRequest, turn: Turn) -> dict[str, Any]:
    """The change set the edit form describes: request/answer texts and rubric item texts."""
    changes: dict[str, Any] = {name: request.POST[name] for name, _ in EDITABLE_TEXTS if name in request.POST}
    review = Review.objects.filter(turn=turn, reviewer_id=request.user.pk).first()
    start = review.proposed if review and review.proposed else tc.snapshot(turn=turn)
    rubric = []
    for i, item in enumerate(start["rubric"]):
        rubric.append(
            {
                **item,
                "text_en": request.POST.get(f"rubric-{i}-text_en", item["text_en"]),
                "text_zh": request.POST.get(f"rubric-{i}-text_zh", item["text_zh"]),
            }
        )
    changes["rubric"] = rubric
    return changes


@login_required
@require_POST
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the edit as a draft (gate warnings shown) or submit it with an approval."""
    turn = _turn_for(request, pk)
    try:
        proposed = _proposed(request, turn)
        if request.POST.get("submit_edit"):
            return _submit(request, turn, decision=Decision.APPROVE, proposed=proposed)
        review = services.save_draft_review(
            turn=turn, reviewer=request.user, proposed=proposed, base_version=_base_version(request)
        )
    except (services.PermissionDenied, services.InvalidState, ValueError) as exc:
        return _actions(request, turn, error=str(exc))
    return _actions(request, turn, my_review=review, message="Draft saved.", warnings=review.gate_warnings)


# --- Adjudication -----------------------------------------------------------------------------


def _adjudicable_turn(request: HttpRequest, pk: int) -> Turn:
    """A turn for the adjudication screen: adjudicators/admins only (everyone else gets a 404)."""
    if not is_adjudicator(request.user):
        raise Http404("not an adjudicator")
    return get_object_or_404(Turn.objects.select_related("session"), pk=pk)


def _adjudication_context(request: HttpRequest, turn: Turn, **extra: Any) -> dict[str, Any]:
    current = tc.snapshot(turn=turn)
    columns = []
    for label, review in zip(("A", "B"), reviews_ab(turn=turn), strict=True):
        if review is None:
            continue
        proposed = review.proposed or {}
        mine = tc.apply_changes(
            base=current, changes=tc.changes_between(base=review.base_content or current, proposed=proposed)
        )
        columns.append({"label": label, "review": review, "diffs": diffs.diff_content(current, mine)})
    return {
        "turn": turn,
        "columns": columns,
        "pending": turn.status == TurnState.NEEDS_ADJUDICATION,
        "editable": [(name, label, current.get(name, "")) for name, label in EDITABLE_TEXTS],
        "rubric_form": current.get("rubric", []),
        "reject_reasons": RejectReason.choices,
        **extra,
    }


def _adjudication_changes(request: HttpRequest, turn: Turn) -> dict[str, Any]:
    """The edited content the form describes: request/answer texts and rubric item texts."""
    current = tc.snapshot(turn=turn)
    changes: dict[str, Any] = {name: request.POST[name] for name, _ in EDITABLE_TEXTS if name in request.POST}
    changes["rubric"] = [
        {
            **item,
            "text_en": request.POST.get(f"rubric-{i}-text_en", item["text_en"]),
            "text_zh": request.POST.get(f"rubric-{i}-text_zh", item["text_zh"]),
        }
        for i, item in enumerate(current["rubric"])
    ]
    return changes


@login_required
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: both reviews with their diffs against the current content. POST (HTMX): take A/B or edit."""
    turn = _adjudicable_turn(request, pk)
    if request.method == "GET":
        if turn.status != TurnState.NEEDS_ADJUDICATION:
            raise Http404("turn does not need adjudication")
        return render(request, "annotations/adjudicate.html", _adjudication_context(request, turn))
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "POST"])
    chosen = request.POST.get("chosen", "")
    extra: dict[str, Any] = {}
    try:
        kwargs: dict[str, Any] = {
            "chosen": chosen,
            "base_version": _base_version(request),
            "reason": request.POST.get("reason", ""),
        }
        if chosen == Chosen.EDITED:
            kwargs["content"] = _adjudication_changes(request, turn)
            kwargs["decision"] = request.POST.get("decision") or Decision.APPROVE
            kwargs["reject_reason"] = request.POST.get("reject_reason", "")
        services.adjudicate(turn=turn, adjudicator=request.user, **kwargs)
        extra["message"] = "Adjudicated."
    except services.Conflict as conflict:
        extra.update(error=str(conflict), conflict=conflict)
    except (services.PermissionDenied, services.InvalidState, ValueError) as exc:
        extra["error"] = str(exc)
    turn = Turn.objects.select_related("session").get(pk=turn.pk)
    return render(request, "annotations/_adjudication.html", _adjudication_context(request, turn, **extra))


# --- History ----------------------------------------------------------------------------------


@login_required
def history(request: HttpRequest, pk: int) -> HttpResponse:
    """Every revision of the turn, grouped per field, each with its before/after diff."""
    turn = _turn_for(request, pk)
    fields: dict[str, list[dict[str, Any]]] = {}
    for revision in selectors.history(turn=turn):
        fields.setdefault(revision.field, []).append(
            {"revision": revision, "diff": diffs.diff_field(revision.field, revision.before, revision.after)}
        )
    return render(request, "annotations/history.html", {"turn": turn, "fields": fields})


# --- Dashboard: progress and agreement (thin view over selectors.status_counts / agreement) ---

DASHBOARD_STATUSES = (
    (TurnState.DRAFT, "Draft", "#9aa4b2"),
    (TurnState.IN_REVIEW, "In review", "#3b82f6"),
    (TurnState.NEEDS_ADJUDICATION, "Needs adjudication", "#d4a72c"),
    (TurnState.APPROVED, "Approved", "#1a7f37"),
    (TurnState.REJECTED, "Rejected", "#c0392b"),
)
CHART_BAR_WIDTH, CHART_LABEL_WIDTH, CHART_ROW_HEIGHT = 420, 170, 26


def _status_rows(counts: dict[Any, dict[str, int]], label=str) -> list[dict[str, Any]]:
    rows = []
    for group, by_status in counts.items():
        cells = [by_status.get(status, 0) for status, _, _ in DASHBOARD_STATUSES]
        rows.append({"group": group, "label": label(group), "cells": cells, "total": sum(cells)})
    return rows


def _status_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Geometry of a stacked horizontal bar chart (one bar per row), drawn as inline SVG."""
    biggest = max((row["total"] for row in rows), default=0) or 1
    bars = []
    for i, row in enumerate(rows):
        x, segments = CHART_LABEL_WIDTH, []
        for (status, label, colour), n in zip(DASHBOARD_STATUSES, row["cells"], strict=True):
            width = round(CHART_BAR_WIDTH * n / biggest, 1)
            if n:
                segments.append({"x": x, "width": width, "colour": colour, "status": status, "label": label, "n": n})
            x += width
        y = i * CHART_ROW_HEIGHT
        bars.append(
            {"label": row["label"], "y": y, "text_y": y + 17, "segments": segments, "total": row["total"], "end": x + 6}
        )
    return {
        "bars": bars,
        "width": CHART_LABEL_WIDTH + CHART_BAR_WIDTH + 60,
        "height": max(len(rows), 1) * CHART_ROW_HEIGHT,
        "legend": [(label, colour) for _, label, colour in DASHBOARD_STATUSES],
    }


def _agreement_sections(user: Any, *, everyone: bool) -> list[dict[str, Any]]:
    decisions, rubric = agreement.ratings_from_reviews(selectors.submitted_reviews())
    me = user.get_username()
    sections = []
    for key, title, ratings in (
        ("decisions", "Decisions (approve/reject)", decisions),
        ("rubric", "Rubric items (keep/drop)", rubric),
    ):
        pairs = [
            {
                "a": p.rater_a,
                "b": p.rater_b,
                "n": p.n,
                "percent": agreement.format_statistic(p.percent, percent=True),
                "kappa": agreement.format_statistic(p.kappa),
            }
            for p in agreement.pairwise(ratings)
            if everyone or me in (p.rater_a, p.rater_b)
        ]
        alpha = agreement.format_statistic(agreement.krippendorff_alpha_nominal(ratings)) if everyone else None
        sections.append({"key": key, "title": title, "units": len(ratings), "pairs": pairs, "alpha": alpha})
    return sections


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Counts by status, rejections by reason and agreement; reviewers see only their own figures."""
    user = request.user
    everyone = is_adjudicator(user)
    by_reviewer = selectors.status_counts(by="session__assignments__reviewer__username")
    by_reviewer.pop(None, None)  # turns of sessions nobody is assigned to
    if not everyone:
        by_reviewer = {user.get_username(): by_reviewer.get(user.get_username(), {})}
    context: dict[str, Any] = {
        "everyone": everyone,
        "statuses": DASHBOARD_STATUSES,
        "my_queue": selectors.review_queue(user=user).count(),
        "by_reviewer": _status_rows(by_reviewer),
        "agreement": _agreement_sections(user, everyone=everyone),
    }
    if everyone:
        scenario_labels = dict(Scenario.choices)
        by_scenario = _status_rows(selectors.status_counts(by="session__scenario"), lambda s: scenario_labels.get(s, s))
        reasons = dict(RejectReason.choices)
        context.update(
            by_scenario=by_scenario,
            by_tier=_status_rows(selectors.status_counts(by="session__tier"), lambda tier: f"L{tier}"),
            rejected=[
                {"reason": reason, "label": reasons.get(reason, reason or "—"), "n": n}
                for reason, n in sorted(selectors.rejected_by_reason().items(), key=lambda kv: (-kv[1], kv[0]))
            ],
            chart=_status_chart(by_scenario),
            adjudication_queue=selectors.adjudication_queue().count(),
        )
    return render(request, "annotations/dashboard.html", context)
