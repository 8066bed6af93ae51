"""The review screen's actions, one entry each: decide (approve/reject), save an edit, merge a conflict.

Each entry takes the turn, the user and what the request said (a :class:`PostedEditor` reads the editor form
against the content it was drawn from) and returns an :class:`ActionResult` saying what happened: the message or
error, the gate warnings, the re-executed gold calls to preview, a conflict to offer for merging. The views only
parse the request and pick the fragment to render from the result. Who edits what lives here, not in the views:
assigned reviewers edit their blind draft (``save_draft_review`` / ``submit_review``); adjudicators and admins who
are not reviewers of the session edit the turn itself (``save_turn_edit`` / ``merge``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from django.db.models import prefetch_related_objects
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotations import content as tc
from annotations.models import Decision, Review
from annotations.roles import is_adjudicator
from annotations.services.edits import merge, save_turn_edit
from annotations.services.errors import Conflict, DraftConflict, InvalidState, PermissionDenied
from annotations.services.reviews import is_assigned, save_draft_review, submit_review
from annotations.steps import rerun_step
from scenarios.models import Turn

REFUSALS = (PermissionDenied, InvalidState, ValueError)


class PostedEditor(Protocol):
    """The editor form as posted, read against the content it was drawn from (the view's form parser)."""

    def changes(self, *, start: dict[str, Any]) -> dict[str, Any]: ...

    def merged(self, *, base: dict[str, Any]) -> dict[str, Any]: ...

    def keeps_editor(self, *, before: dict[str, Any], after: dict[str, Any]) -> bool: ...


@dataclass
class ActionResult:
    """What an action did, for the view to render (nothing here is HTTP)."""

    turn: Turn
    message: str = ""
    error: str = ""
    warnings: list[Any] = field(default_factory=list)
    previews: list[dict[str, Any]] = field(default_factory=list)
    conflict: Conflict | None = None
    resubmit: dict[str, str] | None = None  # the decision to offer again beside a conflict
    review: Review | None = None  # the reviewer's draft after a save or a merge
    submitted: str = ""  # the decision of a review submitted by this action ("" if none)
    saved: bool = False  # a direct edit made a new version
    editor_open: bool = False
    keeps_editor: bool = False  # a draft save whose editor keeps its shape: only the changed parts are sent
    invalid_content: bool = False  # refused before anything was stored: the form keeps what was typed


def _reviewer_conflict(*, turn: Turn, user: Any, conflict: Conflict) -> Conflict:
    """Keep only the fields the reviewer changed: the rest of their proposal is the old base, and offering it for
    merging would undo someone else's edit."""
    review = Review.objects.filter(turn=turn, reviewer_id=user.pk).first()
    if review is not None and not isinstance(conflict, DraftConflict):
        mine = {name for name, _old, _new in tc.changed_fields(before=review.base_content, after=review.proposed)}
        conflict.diffs = [d for d in conflict.diffs if d.field in mine]
    return conflict


def decide(
    *,
    turn: Turn,
    user: Any,
    base_version: int,
    decision: str,
    reject_reason: str = "",
    reason: str = "",
    proposed: dict[str, Any] | None = None,
    draft_token: str | None = None,
) -> ActionResult:
    """Submit the user's review of ``turn`` (approve or reject, with their draft's changes if any)."""
    kwargs: dict[str, Any] = {"decision": decision, "reason": reason}
    if decision == Decision.REJECT:
        kwargs["reject_reason"] = reject_reason
    if proposed is not None:
        kwargs.update(proposed=proposed, draft_token=draft_token)
    try:
        _review, warnings = submit_review(turn=turn, reviewer=user, base_version=base_version, **kwargs)
    except Conflict as conflict:
        conflict = _reviewer_conflict(turn=turn, user=user, conflict=conflict)
        offered = {"decision": decision, "reject_reason": reject_reason, "reason": reason}
        return ActionResult(turn=turn, error=str(conflict), conflict=conflict, resubmit=offered)
    except REFUSALS as exc:
        return ActionResult(turn=turn, error=str(exc))
    return ActionResult(turn=turn, message=_("Review submitted."), warnings=warnings, submitted=decision)


def _draft_start(*, turn: Turn, review: Review | None, base_version: int) -> dict[str, Any]:
    """The content save_draft_review lays a change set over (mirrors its rebase rule)."""
    current = tc.snapshot(turn=turn)
    if review is None:
        return current
    if base_version != review.base_version:
        return tc.apply_changes(
            base=current, changes=tc.changes_between(base=review.base_content, proposed=review.proposed)
        )
    return review.proposed or review.base_content


def _previews(*, turn: Turn, proposed: dict[str, Any]) -> list[dict[str, Any]]:
    """Re-executed observations of the steps whose arguments the draft changes (not stored)."""
    stored = {s.idx: s for s in turn.steps.all()}
    out = []
    for step in proposed.get("steps", []):
        row = stored.get(step["idx"])
        if row is not None and step["arguments"] != row.arguments:
            observation = rerun_step(session=turn.session, tool=row.tool, arguments=step["arguments"])
            out.append({"idx": row.idx, "tool": row.tool, "arguments": step["arguments"], "observation": observation})
    return out


def _save_draft(
    *, turn: Turn, user: Any, base_version: int, form: PostedEditor, submit: bool, draft_token: str | None
) -> ActionResult:
    if not submit:
        # A draft save leaves the turn as it is: read its steps and rubric once for the five places that
        # snapshot it (form start, service, gates, previews, editor), not two queries each.
        prefetch_related_objects([turn], "steps", "rubric_items")
    review = Review.objects.filter(turn=turn, reviewer_id=user.pk).first()
    start = _draft_start(turn=turn, review=review, base_version=base_version)
    changes = form.changes(start=start)
    if submit:
        return decide(
            turn=turn,
            user=user,
            base_version=base_version,
            decision=Decision.APPROVE,
            proposed=changes,
            draft_token=draft_token,
        )
    try:
        review = save_draft_review(
            turn=turn, reviewer=user, proposed=changes, base_version=base_version, draft_token=draft_token
        )
    except DraftConflict as conflict:
        return ActionResult(turn=turn, error=str(conflict), conflict=conflict)
    return ActionResult(
        turn=turn,
        message=_("Draft saved."),
        warnings=review.gate_warnings,
        previews=_previews(turn=turn, proposed=review.proposed),
        review=review,
        editor_open=True,
        keeps_editor=form.keeps_editor(before=start, after=review.proposed),
    )


def _save_turn(*, turn: Turn, user: Any, base_version: int, form: PostedEditor, reason: str) -> ActionResult:
    changes = form.changes(start=tc.snapshot(turn=turn))
    if not changes:
        return ActionResult(turn=turn, editor_open=True, message=_("Nothing changed."))
    try:
        turn, revisions, warnings = save_turn_edit(
            turn=turn, user=user, changes=changes, base_version=base_version, reason=reason
        )
    except Conflict as conflict:
        return ActionResult(turn=turn, error=str(conflict), conflict=conflict)
    message = ngettext(
        "Saved as version %(version)s (%(n)s field changed).",
        "Saved as version %(version)s (%(n)s fields changed).",
        len(revisions),
    ) % {
        "version": turn.version,
        "n": len(revisions),
    }
    # content.write re-executed the calls whose arguments changed: show what they returned.
    rerun = {int(r.field.split(".")[1]) for r in revisions if r.field.startswith("steps.")}
    previews = [
        {"idx": s.idx, "tool": s.tool, "arguments": s.arguments, "observation": s.observation}
        for s in turn.steps.filter(idx__in=rerun).order_by("idx")
    ]
    return ActionResult(turn=turn, message=message, warnings=warnings, previews=previews, saved=True)


def save_edit(
    *,
    turn: Turn,
    user: Any,
    base_version: int,
    form: PostedEditor,
    submit: bool = False,
    draft_token: str | None = None,
    reason: str = "",
) -> ActionResult:
    """Reviewers: save the draft (gate warnings and re-executed calls to preview) or submit it with an approval.
    Adjudicators and admins not assigned to the session: save the edit to the turn (a new version)."""
    try:
        if is_assigned(turn=turn, user=user):
            return _save_draft(
                turn=turn, user=user, base_version=base_version, form=form, submit=submit, draft_token=draft_token
            )
        if is_adjudicator(user):
            return _save_turn(turn=turn, user=user, base_version=base_version, form=form, reason=reason)
        raise PermissionDenied(_("you may not edit this turn"))
    except tc.InvalidContent as exc:  # refused before anything was stored
        return ActionResult(turn=turn, error=str(exc), invalid_content=True)
    except REFUSALS as exc:
        return ActionResult(turn=turn, error=str(exc), editor_open=True)


def _merge_draft(
    *,
    turn: Turn,
    user: Any,
    base_version: int,
    form: PostedEditor,
    draft_token: str | None,
    decision: str,
    reject_reason: str,
    reason: str,
) -> ActionResult:
    if draft_token is not None:  # a draft conflict (another tab): merged over the newer draft
        draft = Review.objects.filter(turn=turn, reviewer_id=user.pk).first()
        start = (draft.proposed or draft.base_content) if draft else tc.snapshot(turn=turn)
        merged = tc.changes_between(base=start, proposed=form.merged(base=start))
        base_version = draft.base_version if draft else base_version
    else:
        merged = form.merged(base=tc.snapshot(turn=turn))
    review = save_draft_review(
        turn=turn, reviewer=user, proposed=merged, base_version=base_version, draft_token=draft_token
    )
    if decision in (Decision.APPROVE, Decision.REJECT):
        return decide(
            turn=turn,
            user=user,
            base_version=base_version,
            decision=decision,
            reject_reason=reject_reason,
            reason=reason,
        )
    return ActionResult(turn=turn, message=_("Merged into your draft."), warnings=review.gate_warnings, review=review)


def merge_conflict(
    *,
    turn: Turn,
    user: Any,
    base_version: int,
    form: PostedEditor,
    settled: list[str],
    draft_token: str | None = None,
    decision: str = "",
    reject_reason: str = "",
    reason: str = "",
) -> ActionResult:
    """Save the merge form of a conflict on top of the version it reported (``base_version``).

    Direct edits go through ``merge`` (the user's conflict revisions are marked resolved; ``settled`` are the
    fields decided on, even where the user kept the current text). A reviewer's draft is rebased onto the current
    content with the merged fields, then resubmitted with the decision of the submission that conflicted, if any.
    """
    try:
        if is_assigned(turn=turn, user=user):
            return _merge_draft(
                turn=turn,
                user=user,
                base_version=base_version,
                form=form,
                draft_token=draft_token,
                decision=decision,
                reject_reason=reject_reason,
                reason=reason,
            )
        if not is_adjudicator(user):
            raise PermissionDenied(_("you may not edit this turn"))
        current = tc.snapshot(turn=turn)
        merged = form.merged(base=current)
        turn, _revisions, warnings = merge(
            turn=turn,
            user=user,
            changes=tc.changes_between(base=current, proposed=merged),
            base_version=base_version,
            settled=settled,
        )
    except Conflict as conflict:
        return ActionResult(turn=turn, error=str(conflict), conflict=conflict)
    except tc.InvalidContent as exc:  # refused before anything was stored: the merge form keeps what was typed
        return ActionResult(turn=turn, error=str(exc), invalid_content=True)
    except REFUSALS as exc:
        return ActionResult(turn=turn, error=str(exc), editor_open=True)
    message = _("Merged: the turn is at version %(v)s.") % {"v": turn.version}
    return ActionResult(turn=turn, message=message, warnings=warnings)
