"""The actions panel (decision, editor, lease, conflict/merge, comments) and its context."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from annotations import blind, services
from annotations import content as tc
from annotations.models import Lease, RejectReason, Review
from annotations.review_context import CONTENT_CACHE_SECONDS, load_content
from annotations.roles import is_adjudicator
from annotations.selectors import review_progress
from annotations.services.reviews import current_token, is_assigned
from annotations.views.editor_form import editor_fields, stale_twins
from scenarios.models import Turn
from scenarios.suggestions_cache import suggestions_generation


def lease_context(
    *, turn: Turn, user: Any, lease: Lease | bool | None = False, hidden: set[int] | frozenset[int] | None = None
) -> dict[str, Any]:
    """``lease_state``: ``mine`` (renewed by a heartbeat), ``other`` (someone else's live lease) or ``none``;
    ``lease_holder``: the holder's name as the user may see it (blind review: "another reviewer")."""
    if lease is False:
        lease = Lease.objects.select_related("holder").filter(turn=turn).first()
    if lease is None or not lease.live(now=timezone.now()):
        return {"lease": None, "lease_state": "none"}
    if lease.holder_id == user.pk:
        return {"lease": lease, "lease_state": "mine", "lease_holder": user.get_username()}
    holder = blind.user_label(turn=turn, viewer=user, other=lease.holder, hidden=hidden)
    return {"lease": lease, "lease_state": "other", "lease_holder": holder}


def _editor_key(*, turn: Turn, draft: Review | None) -> str:
    """What the editor's fields show: the turn at its version, or this draft at its last save (every
    save changes ``current_token``)."""
    shown = f"draft-{draft.pk}-{current_token(draft)}" if draft is not None else "turn"
    # v2: the orig- twins carry ids (render_draft_saved updates them out of band); v3: steps numbered from 1,
    # subtypes labelled in the UI language; v4: argument boxes sized to their JSON.
    return f"v4-{turn.pk}-{turn.version}-{shown}-{suggestions_generation()}"


def draft_badge(draft: Review | None) -> dict[str, Any]:
    """``draft_changes``: how many fields the user's saved draft changes (0: none, or no draft) and when it was
    saved: the decision bar's "draft: N changes" and what Approve says it will submit."""
    if draft is None:
        return {"draft_changes": 0, "draft_saved_at": None}
    changes = len(tc.changed_fields(before=draft.base_content, after=draft.proposed))
    return {"draft_changes": changes, "draft_saved_at": draft.updated if changes else None}


def actions_context(
    request: HttpRequest,
    turn: Turn,
    *,
    my_review: Review | None = None,
    editor_open: bool = False,
    assigned: bool | None = None,
    review_known: bool = False,
    hidden: set[int] | frozenset[int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """``assigned``: whether the user reviews the turn's session, when the caller already knows it;
    ``review_known``: ``my_review`` is the user's review as read by the caller (None: they have none);
    ``hidden``: :func:`annotations.blind.hidden_users`, when the caller has it."""
    user = request.user
    can_review = is_assigned(turn=turn, user=user) if assigned is None else assigned
    if my_review is None and can_review and not review_known:
        my_review = Review.objects.filter(turn=turn, reviewer_id=user.pk).first()
    if hidden is None:  # once for comments and the lease banner
        hidden = blind.hidden_users(turn=turn, user=user)
    drafting = bool(can_review and my_review and my_review.proposed and not my_review.submitted)
    base_version = my_review.base_version if (can_review and my_review) else turn.version
    # Adjudicators and admins who are not reviewers of the session edit the turn itself.
    direct_edit = not can_review and is_adjudicator(user)
    editable = direct_edit or (can_review and not (my_review and my_review.submitted))
    # A saved draft is shown, not hidden behind the closed editor: its values are what Approve submits.
    wants_open = (
        editor_open or drafting or bool(extra.get("conflict") or extra.get("warnings") or extra.get("previews"))
    )
    context = {
        "turn": turn,
        "can_review": can_review,
        "direct_edit": direct_edit,
        "my_review": my_review,
        # The editor's fields show the draft or the turn's content at this version, nothing else: the
        # rendered fields are cached under that key (_editor.html), and read (with the turn's steps and
        # rubric) only when that key is not in the cache.
        "editor": SimpleLazyObject(
            lambda: editor_fields(my_review.proposed if drafting else tc.snapshot(turn=load_content(turn)))
        ),
        "editor_cache_key": _editor_key(turn=turn, draft=my_review if drafting else None),
        "EDITOR_CACHE_SECONDS": CONTENT_CACHE_SECONDS,
        "editor_base_version": base_version,
        "draft_token": current_token(my_review) if can_review else "",
        "stale_draft": drafting and base_version != turn.version,
        **draft_badge(my_review if drafting else None),
        "editor_open": editable and wants_open,
        "reject_reasons": RejectReason.choices,
        # "12 / 64 done" in the decision bar: read only when the bar is drawn (a reviewer's panel).
        "progress": SimpleLazyObject(lambda: review_progress(user=user)) if can_review else None,
        "comments": blind.visible_comments(turn=turn, user=user, hidden=hidden),
        **extra,
    }
    if direct_edit and not context.get("conflict"):
        # Stale saves of the user's not merged yet: offered again on every reopening.
        context["pending_conflict"] = services.unapplied(turn=turn, user=user)
    if "lease_state" not in context:
        context.update(lease_context(turn=turn, user=user, hidden=hidden))
    # An editor that comes back open (warnings, conflict, error) keeps its lease: take it on load, renew it.
    context["lease_trigger"] = "load, every 30s" if context["editor_open"] else ""
    return context


def render_actions(request: HttpRequest, turn: Turn, **extra: Any) -> HttpResponse:
    """The re-rendered panel; a panel that comes back with the editor closed gives up the lease."""
    turn.refresh_from_db(fields=["status", "version"])
    context = actions_context(request, turn, **extra)
    if not context["editor_open"] and context["lease_state"] == "mine":
        services.release(turn=turn, user=request.user)
        context.update(lease=None, lease_state="none")
    return render(request, "annotations/_actions.html", context)


def keep_form_in_place(response: HttpResponse) -> HttpResponse:
    """Only the response's out-of-band pieces are swapped: the form the user is typing in stays as it is."""
    response["HX-Reswap"] = "none"
    return response


def render_draft_saved(
    request: HttpRequest,
    turn: Turn,
    *,
    review: Review,
    fields: dict[str, Any],
    message: str,
    previews: list[dict[str, Any]],
) -> HttpResponse:
    """A saved draft whose editor keeps its shape (see editor_form.keeps_editor): the feedback, the
    previews, the stale-draft banner, the version and token inputs, and the ``orig-`` twins of the
    fields this save changed, all out of band. The reviewer keeps their caret and scroll position,
    and nothing of the panel that a draft save leaves alone (comments, lease, decision) is read."""
    context = {
        "turn": turn,
        "saved_draft": True,
        "direct_edit": False,
        "message": message,
        "warnings": review.gate_warnings,
        "previews": previews,
        "editor_base_version": review.base_version,
        "draft_token": current_token(review),
        "stale_draft": review.base_version != turn.version,
        "twins": stale_twins(request.POST, fields),
        **draft_badge(review),
    }
    return keep_form_in_place(render(request, "annotations/_draft_saved.html", context))


def render_edit_error(request: HttpRequest, turn: Turn, *, error: str) -> HttpResponse:
    """A save refused before anything was stored (a field that does not parse or validate): only the
    error banner, so the editor keeps everything the user typed."""
    return keep_form_in_place(render(request, "annotations/_draft_saved.html", {"turn": turn, "error": error}))
