"""HTMX actions on the review screen: approve, reject, comment, edit (draft or direct), merge.

Each answers with the re-rendered actions panel, status 200 even for errors and conflicts (htmx 2
does not swap 4xx responses), carrying a banner. Two answers leave the editor the user types in
as it is and send only what changed, out of band: a draft save that keeps the editor's shape
(panel.render_draft_saved) and a field that does not parse or validate (panel.render_edit_error).

Assigned reviewers edit their blind draft (services.save_draft_review / submit_review); adjudicators
and admins who are not reviewers of the session edit the turn itself (services.save_turn_edit / merge).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import prefetch_related_objects
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotations import blind, services
from annotations import content as tc
from annotations.models import Decision, Review
from annotations.roles import is_adjudicator
from annotations.services.reviews import is_assigned
from annotations.steps import rerun_step
from annotations.views.common import posted_version, turn_for
from annotations.views.done import next_queued
from annotations.views.editor_form import changes_from_post, editor_fields, keeps_editor, merged_from_post
from annotations.views.panel import render_actions, render_draft_saved, render_edit_error
from scenarios.models import Turn

SUBMITTED_TAG = "review-submitted"
ERRORS = (services.PermissionDenied, services.InvalidState, ValueError)


def _reviewer_conflict(turn: Turn, user: Any, conflict: services.Conflict) -> services.Conflict:
    """Keep only the fields the reviewer changed: the rest of their proposal is the old base, and
    offering it for merging would undo someone else's edit."""
    review = Review.objects.filter(turn=turn, reviewer_id=user.pk).first()
    if review is not None and not isinstance(conflict, services.DraftConflict):
        mine = {name for name, _old, _new in tc.changed_fields(before=review.base_content, after=review.proposed)}
        conflict.diffs = [d for d in conflict.diffs if d.field in mine]
    return conflict


def _submit(request: HttpRequest, turn: Turn, *, base_version: int, **kwargs: Any) -> HttpResponse:
    try:
        _review, warnings = services.submit_review(
            turn=turn, reviewer=request.user, base_version=base_version, **kwargs
        )
    except services.Conflict as conflict:
        conflict = _reviewer_conflict(turn, request.user, conflict)
        return render_actions(
            request,
            turn,
            error=str(conflict),
            conflict=conflict,
            resubmit={k: kwargs.get(k, "") for k in ("decision", "reject_reason", "reason")},
        )
    except ERRORS as exc:
        return render_actions(request, turn, error=str(exc))
    response = render_actions(request, turn, message=_("Review submitted."), warnings=warnings)
    if request.headers.get("HX-Request") and kwargs.get("decision") == Decision.APPROVE and request.POST.get("advance"):
        # `a`: on to the next queued turn, which offers "Undo" for a short while (views.done).
        response["HX-Redirect"] = next_queued(user=request.user, after=turn.pk)
    elif request.headers.get("HX-Request"):
        # The whole screen changed (status, reviews, the draft is gone): htmx reloads the page, which
        # shows this message in the panel again (review.views.review_turn reads it).
        messages.success(request, _("Review submitted."), extra_tags=SUBMITTED_TAG)
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def approve(request: HttpRequest, pk: int) -> HttpResponse:
    turn = turn_for(request, pk)
    return _submit(
        request,
        turn,
        base_version=posted_version(request),
        decision=Decision.APPROVE,
        reason=request.POST.get("reason", ""),
    )


@login_required
@require_POST
def reject(request: HttpRequest, pk: int) -> HttpResponse:
    turn = turn_for(request, pk)
    return _submit(
        request,
        turn,
        base_version=posted_version(request),
        decision=Decision.REJECT,
        reject_reason=request.POST.get("reject_reason", ""),
        reason=request.POST.get("reason", ""),
    )


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


def _draft_start(turn: Turn, review: Review | None, base_version: int) -> dict[str, Any]:
    """The content save_draft_review lays a change set over (mirrors its rebase rule)."""
    current = tc.snapshot(turn=turn)
    if review is None:
        return current
    if base_version != review.base_version:
        return tc.apply_changes(
            base=current, changes=tc.changes_between(base=review.base_content, proposed=review.proposed)
        )
    return review.proposed or review.base_content


def _previews(turn: Turn, proposed: dict[str, Any]) -> list[dict[str, Any]]:
    """Re-executed observations of the steps whose arguments the draft changes (not stored)."""
    stored = {s.idx: s for s in turn.steps.all()}
    out = []
    for step in proposed.get("steps", []):
        row = stored.get(step["idx"])
        if row is not None and step["arguments"] != row.arguments:
            observation = rerun_step(session=turn.session, tool=row.tool, arguments=step["arguments"])
            out.append({"idx": row.idx, "tool": row.tool, "arguments": step["arguments"], "observation": observation})
    return out


def _edit_draft(request: HttpRequest, turn: Turn, base_version: int) -> HttpResponse:
    if not request.POST.get("submit_edit"):
        # A draft save leaves the turn as it is: read its steps and rubric once for the five places
        # that snapshot it (form start, service, gates, previews, editor), not two queries each.
        prefetch_related_objects([turn], "steps", "rubric_items")
    review = Review.objects.filter(turn=turn, reviewer_id=request.user.pk).first()
    start = _draft_start(turn, review, base_version)
    changes = changes_from_post(request.POST, start=start)
    token = request.POST.get("draft_token")  # the draft this tab shows (None: an old page, no check)
    if request.POST.get("submit_edit"):
        return _submit(
            request, turn, base_version=base_version, decision=Decision.APPROVE, proposed=changes, draft_token=token
        )
    try:
        review = services.save_draft_review(
            turn=turn, reviewer=request.user, proposed=changes, base_version=base_version, draft_token=token
        )
    except services.DraftConflict as conflict:
        return render_actions(request, turn, error=str(conflict), conflict=conflict)
    previews = _previews(turn, review.proposed)
    if keeps_editor(request.POST, before=start, after=review.proposed):
        return render_draft_saved(
            request,
            turn,
            review=review,
            fields=editor_fields(review.proposed),
            message=_("Draft saved."),
            previews=previews,
        )
    # Rows added or removed, or a compiled suggestion decided: the editor is drawn again.
    return render_actions(
        request,
        turn,
        my_review=review,
        review_known=True,
        assigned=True,
        editor_open=True,
        message=_("Draft saved."),
        warnings=review.gate_warnings,
        previews=previews,
    )


def _edit_turn(request: HttpRequest, turn: Turn, base_version: int) -> HttpResponse:
    changes = changes_from_post(request.POST, start=tc.snapshot(turn=turn))
    if not changes:
        return render_actions(request, turn, editor_open=True, message=_("Nothing changed."))
    try:
        turn, revisions, warnings = services.save_turn_edit(
            turn=turn,
            user=request.user,
            changes=changes,
            base_version=base_version,
            reason=request.POST.get("reason", ""),
        )
    except services.Conflict as conflict:
        return render_actions(request, turn, error=str(conflict), conflict=conflict)
    message = _("Saved as version %(version)s (%(n)s field(s) changed).") % {
        "version": turn.version,
        "n": len(revisions),
    }
    # content.write re-executed the calls whose arguments changed: show what they returned.
    rerun = {int(r.field.split(".")[1]) for r in revisions if r.field.startswith("steps.")}
    previews = [
        {"idx": s.idx, "tool": s.tool, "arguments": s.arguments, "observation": s.observation}
        for s in turn.steps.filter(idx__in=rerun).order_by("idx")
    ]
    return render_actions(request, turn, message=message, warnings=warnings, previews=previews, saved=True)


@login_required
@require_POST
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Reviewers: save the draft (gate warnings and re-executed calls shown) or submit it with an
    approval. Adjudicators/admins not assigned: save the edit to the turn (a new version)."""
    turn = turn_for(request, pk)
    base_version = posted_version(request)
    try:
        if is_assigned(turn=turn, user=request.user):
            return _edit_draft(request, turn, base_version)
        if is_adjudicator(request.user):
            return _edit_turn(request, turn, base_version)
        raise services.PermissionDenied(_("you may not edit this turn"))
    except tc.InvalidContent as exc:  # refused before anything was stored
        return render_edit_error(request, turn, error=str(exc))
    except ERRORS as exc:
        return render_actions(request, turn, editor_open=True, error=str(exc))


@login_required
@require_POST
def merge(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the merge form of a conflict on top of the version it reported (``base_version``).

    Direct edits go through services.merge (the user's conflict revisions are marked resolved).
    A reviewer's draft is rebased onto the current content with the merged fields, then resubmitted
    with the decision of the submission that conflicted, if there was one.
    """
    turn = turn_for(request, pk)
    base_version = posted_version(request)
    try:
        if is_assigned(turn=turn, user=request.user):
            token = request.POST.get("draft_token")
            if token is not None:  # a draft conflict (another tab): merged over the newer draft
                draft = Review.objects.filter(turn=turn, reviewer_id=request.user.pk).first()
                start = (draft.proposed or draft.base_content) if draft else tc.snapshot(turn=turn)
                merged = tc.changes_between(base=start, proposed=merged_from_post(request.POST, base=start))
                base_version = draft.base_version if draft else base_version
            else:
                merged = merged_from_post(request.POST, base=tc.snapshot(turn=turn))
            review = services.save_draft_review(
                turn=turn, reviewer=request.user, proposed=merged, base_version=base_version, draft_token=token
            )
            decision = request.POST.get("decision", "")
            if decision in (Decision.APPROVE, Decision.REJECT):
                return _submit(
                    request,
                    turn,
                    base_version=base_version,
                    decision=decision,
                    reject_reason=request.POST.get("reject_reason", ""),
                    reason=request.POST.get("reason", ""),
                )
            return render_actions(
                request, turn, my_review=review, message=_("Merged into your draft."), warnings=review.gate_warnings
            )
        if not is_adjudicator(request.user):
            raise services.PermissionDenied(_("you may not edit this turn"))
        merged = merged_from_post(request.POST, base=tc.snapshot(turn=turn))
        current = tc.snapshot(turn=turn)
        turn, _revisions, warnings = services.merge(
            turn=turn,
            user=request.user,
            changes=tc.changes_between(base=current, proposed=merged),
            base_version=base_version,
            # The fields of the merge form: decided on, even where the user kept the current text.
            settled=[key.removeprefix("merge-") for key in request.POST if key.startswith("merge-")],
        )
    except services.Conflict as conflict:
        return render_actions(request, turn, error=str(conflict), conflict=conflict)
    except tc.InvalidContent as exc:  # refused before anything was stored: the merge form keeps what was typed
        return render_edit_error(request, turn, error=str(exc))
    except ERRORS as exc:
        return render_actions(request, turn, editor_open=True, error=str(exc))
    return render_actions(
        request, turn, message=_("Merged: the turn is at version %(v)s.") % {"v": turn.version}, warnings=warnings
    )
