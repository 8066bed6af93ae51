"""HTMX actions on the review screen: approve, reject, comment, edit (draft or direct), merge.

Each view parses the request, calls one service entry (annotations.services.screen_actions, which decides draft
versus turn, conflicts and previews) and renders its result: the re-rendered actions panel, status 200 even for
errors and conflicts (htmx 2 does not swap 4xx responses), carrying a banner. Two results leave the editor the user
types in as it is and send only what changed, out of band: a draft save that keeps the editor's shape
(panel.render_draft_saved) and a field that does not parse or validate (panel.render_edit_error).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotations import blind, services
from annotations.models import Decision
from annotations.services import screen_actions
from annotations.services.reviews import discard_draft as discard_reviewer_draft
from annotations.services.screen_actions import ActionResult
from annotations.views.common import posted_version, turn_for
from annotations.views.done import next_queued
from annotations.views.editor_form import PostedEditorForm, editor_fields
from annotations.views.panel import render_actions, render_draft_saved, render_edit_error


def _render(request: HttpRequest, result: ActionResult) -> HttpResponse:
    """The fragment for an action's result (which part of the screen changes, and how htmx swaps it)."""
    turn = result.turn
    if result.invalid_content:  # refused before anything was stored: the form keeps what was typed
        return render_edit_error(request, turn, error=result.error)
    if result.error:
        extra: dict[str, Any] = {"conflict": result.conflict} if result.conflict else {}
        if result.editor_open:
            extra["editor_open"] = True
        if result.resubmit:
            extra["resubmit"] = result.resubmit
        return render_actions(request, turn, error=result.error, **extra)
    if result.keeps_editor:
        fields = editor_fields(result.review.proposed)
        return render_draft_saved(
            request, turn, review=result.review, fields=fields, message=result.message, previews=result.previews
        )
    if result.submitted and request.headers.get("HX-Request"):
        # Approve, reject or submit edit: on to the next pending turn (same session first), whose page says what
        # was submitted (with its quality gate warnings, if any) and offers Undo while it is allowed (views.done),
        # as Prodigy or Label Studio move on after each answer. htmx follows HX-Redirect without swapping, so the
        # actions panel is not drawn for nothing (a third of the request's time).
        response = HttpResponse(status=204)
        response["HX-Redirect"] = next_queued(user=request.user, after=turn.pk)
        return response
    extra = {"warnings": result.warnings, "previews": result.previews}
    if result.review is not None:
        extra["my_review"] = result.review
        if result.editor_open:  # a draft save whose rows changed: the editor is drawn again
            extra.update(review_known=True, assigned=True, editor_open=True)
    elif result.editor_open:
        extra["editor_open"] = True
    if result.saved:
        extra["saved"] = True
    return render_actions(request, turn, message=result.message, **extra)


@login_required
@require_POST
def approve(request: HttpRequest, pk: int) -> HttpResponse:
    turn = turn_for(request, pk)
    result = screen_actions.decide(
        turn=turn,
        user=request.user,
        base_version=posted_version(request),
        decision=Decision.APPROVE,
        reason=request.POST.get("reason", ""),
    )
    return _render(request, result)


@login_required
@require_POST
def reject(request: HttpRequest, pk: int) -> HttpResponse:
    turn = turn_for(request, pk)
    result = screen_actions.decide(
        turn=turn,
        user=request.user,
        base_version=posted_version(request),
        decision=Decision.REJECT,
        reject_reason=request.POST.get("reject_reason", ""),
        reason=request.POST.get("reason", ""),
    )
    return _render(request, result)


@login_required
@require_POST
def comment(request: HttpRequest, pk: int) -> HttpResponse:
    """Answers with the comments block only, so an open editor keeps its unsaved text."""
    turn = turn_for(request, pk, light=True)
    context: dict[str, Any] = {"turn": turn}
    try:
        services.add_comment(turn=turn, author=request.user, text=request.POST.get("text", ""))
        context["comment_message"] = _("Comment added.")
    except (services.PermissionDenied, ValueError) as exc:
        context["comment_error"] = str(exc)
    context["comments"] = blind.visible_comments(turn=turn, user=request.user)
    return render(request, "annotations/_comments.html", context)


@login_required
@require_POST
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Reviewers: save the draft or submit it with an approval; adjudicators/admins not assigned: a new version."""
    turn = turn_for(request, pk)
    result = screen_actions.save_edit(
        turn=turn,
        user=request.user,
        base_version=posted_version(request),
        form=PostedEditorForm(request.POST),
        submit=bool(request.POST.get("submit_edit")),
        draft_token=request.POST.get("draft_token"),  # the draft this tab shows (None: an old page, no check)
        reason=request.POST.get("reason", ""),
    )
    if request.POST.get("draft") == "auto" and result.review is not None and not result.error:
        result.message = _("Draft saved automatically at %(time)s.") % {
            "time": timezone.localtime(result.review.updated).strftime("%H:%M")
        }
    return _render(request, result)


@login_required
@require_POST
def discard_draft(request: HttpRequest, pk: int) -> HttpResponse:
    """Throw away the reviewer's draft and show the turn as it is (the restored-draft banner's button)."""
    turn = turn_for(request, pk, light=True)
    try:
        if discard_reviewer_draft(turn=turn, reviewer=request.user):
            messages.success(request, _("Your draft was discarded."))
    except services.InvalidState as exc:
        messages.error(request, str(exc))
    response = HttpResponse(status=204)
    response["HX-Redirect"] = reverse("annotations:turn", args=[turn.pk])
    return response


@login_required
@require_POST
def merge(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the merge form of a conflict on top of the version it reported (``base_version``)."""
    turn = turn_for(request, pk)
    result = screen_actions.merge_conflict(
        turn=turn,
        user=request.user,
        base_version=posted_version(request),
        form=PostedEditorForm(request.POST),
        # The fields of the merge form: decided on, even where the user kept the current text.
        settled=[key.removeprefix("merge-") for key in request.POST if key.startswith("merge-")],
        draft_token=request.POST.get("draft_token"),
        decision=request.POST.get("decision", ""),
        reject_reason=request.POST.get("reject_reason", ""),
        reason=request.POST.get("reason", ""),
    )
    return _render(request, result)
