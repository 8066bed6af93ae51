"""Blind reviews: drafts, submission, and finalisation once every assigned review is in."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotations import content as tc
from annotations.diffs import diff_content, diff_field
from annotations.models import (
    ApprovalVia,
    Assignment,
    Decision,
    RejectReason,
    Review,
    Revision,
    RevisionKind,
    TurnState,
    status_label,
)
from annotations.selectors import all_submitted, assigned_reviews
from annotations.services.confirmation import record_approval
from annotations.services.errors import Conflict, DraftConflict, InvalidState, PermissionDenied
from annotations.services.gates import turn_warnings
from annotations.signals import turn_finalised
from scenarios.models import Turn

REVIEWABLE = (TurnState.DRAFT, TurnState.IN_REVIEW)


def is_assigned(*, turn: Turn, user: Any) -> bool:
    return Assignment.objects.filter(session_id=turn.session_id, reviewer_id=user.pk).exists()


def _reviews_closed(status: str) -> InvalidState:
    return InvalidState(_("Reviews of this turn are closed (it is %(status)s).") % {"status": status_label(status)})


def _check_reviewer(turn: Turn, reviewer: Any) -> None:
    if not is_assigned(turn=turn, user=reviewer):
        raise PermissionDenied(
            _("You are not a reviewer of session %(session)s.") % {"session": turn.session.record_id}
        )
    if turn.status not in REVIEWABLE:
        raise _reviews_closed(turn.status)


def _validate_decision(decision: str, reject_reason: str) -> None:
    if decision not in Decision.values:
        raise ValueError(f"decision must be one of {', '.join(Decision.values)}, got {decision!r}")
    if reject_reason and reject_reason not in RejectReason.values:
        raise ValueError(f"reject_reason must be one of {', '.join(RejectReason.values)}, got {reject_reason!r}")
    if decision == Decision.REJECT and not reject_reason:
        raise ValueError(_("A rejection needs a reason: choose one."))


def current_token(review: Review | None) -> str:
    """Identifies the state of a draft a screen shows: it changes with every save of the review."""
    return review.updated.isoformat() if review is not None and review.pk and review.updated else ""


def _stale_draft(review: Review | None, token: str | None, proposed: dict[str, Any] | None) -> None:
    """The same reviewer saved the draft elsewhere (another tab) since ``token`` was shown: the fields
    this save would change are a :class:`DraftConflict`, not a silent overwrite."""
    if token is None or not proposed or token == current_token(review):
        return
    current = (review.proposed or review.base_content) if review is not None else {}
    if not current:
        return
    mine = tc.apply_changes(base=current, changes=proposed)
    changes = tc.changed_fields(before=current, after=mine)
    if changes:
        raise DraftConflict(
            base_version=review.base_version,
            current_version=review.base_version,
            mine=mine,
            current=current,
            diffs=[diff_field(name, old, new) for name, old, new in changes],
        )


@transaction.atomic
def save_draft_review(
    *,
    turn: Turn,
    reviewer: Any,
    proposed: dict[str, Any] | None = None,
    decision: str = Decision.PENDING,
    reject_reason: str = "",
    reason: str = "",
    base_version: int | None = None,
    is_demo: bool = False,
    draft_token: str | None = None,
) -> Review:
    """Store the reviewer's unfinished work (not submitted, invisible to others).

    ``proposed`` is a change set (see annotations.content) laid over the reviewer's earlier proposal,
    so saving again never drops earlier edits; send a field's original value to undo it. The review
    keeps the full proposed snapshot and the single-turn gate warnings. ``draft_token`` (see
    :func:`current_token`): the draft the caller's screen showed; if the draft was saved since, a change
    raises :class:`DraftConflict` (nothing stored). Locks the turn row (``select_for_update``), so two
    first saves of the turn serialise instead of both inserting (SQLite: IMMEDIATE transactions queue).
    """
    _check_reviewer(turn, reviewer)
    if decision != Decision.PENDING:
        _validate_decision(decision, reject_reason)
    Turn.objects.select_for_update(no_key=True).only("pk").get(pk=turn.pk)
    review = Review.objects.select_for_update().filter(turn=turn, reviewer=reviewer).first()
    if review is not None and review.submitted:
        raise InvalidState(_("You already submitted your review of this turn."))
    _stale_draft(review, draft_token, proposed)
    current = tc.snapshot(turn=turn)
    if review is None:
        review = Review(turn=turn, reviewer=reviewer, base_content=current, base_version=turn.version)
        start = current
    elif base_version is not None and base_version != review.base_version:
        # The reviewer reloaded a newer version: rebase, carrying over what they had changed.
        carried = tc.changes_between(base=review.base_content, proposed=review.proposed)
        review.base_content, review.base_version = current, turn.version
        start = tc.apply_changes(base=current, changes=carried)
    else:
        start = review.proposed or review.base_content
    review.proposed = tc.apply_changes(base=start, changes=proposed or {})
    review.decision, review.reject_reason, review.reason = decision, reject_reason, reason
    review.gate_warnings = turn_warnings(turn=turn, content=review.proposed)
    review.is_demo = review.is_demo or is_demo  # made (or touched) by `manage.py demo`
    review.save()
    return review


def submit_review(
    *,
    turn: Turn,
    reviewer: Any,
    decision: str,
    reason: str = "",
    reject_reason: str = "",
    proposed: dict[str, Any] | None = None,
    base_version: int,
    is_demo: bool = False,
    draft_token: str | None = None,
) -> tuple[Review, list[dict[str, Any]]]:
    """Submit the reviewer's decision and proposed edits; returns ``(review, gate_warnings)``.

    Only an assigned reviewer may submit, once, while the turn is in review. The proposal is first
    saved as a draft (committed), so a failed submission loses nothing. If ``base_version`` is stale
    and the proposal changes content, :class:`Conflict` is raised (the draft keeps the proposal).
    When this is the last assigned review the turn is finalised (see :func:`finalise`). Locks the
    turn row (``select_for_update``) for the submission; ``turn_finalised`` is sent after commit.
    """
    _validate_decision(decision, reject_reason)
    if decision == Decision.PENDING:
        raise ValueError("submit approve or reject; use save_draft_review for pending work")
    draft = save_draft_review(
        turn=turn,
        reviewer=reviewer,
        proposed=proposed,
        decision=decision,
        reject_reason=reject_reason,
        reason=reason,
        base_version=base_version,
        is_demo=is_demo,
        draft_token=draft_token,
    )
    return _submit(turn=turn, draft=draft, base_version=base_version)


@transaction.atomic
def _submit(*, turn: Turn, draft: Review, base_version: int) -> tuple[Review, list[dict[str, Any]]]:
    locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
    review = Review.objects.select_for_update().get(pk=draft.pk)
    if review.submitted:
        raise InvalidState(_("You already submitted your review of this turn."))
    if locked.status not in REVIEWABLE:
        raise _reviews_closed(locked.status)
    if base_version != locked.version and review.has_edits:
        current = tc.snapshot(turn=locked)
        raise Conflict(
            base_version=base_version,
            current_version=locked.version,
            mine=review.proposed,
            current=current,
            diffs=diff_content(current, review.proposed),
        )
    review.submitted_at = timezone.now()
    review.save(update_fields=["submitted_at", "updated"])
    finalise(turn=locked)
    turn.status, turn.version = locked.status, locked.version
    return review, review.gate_warnings


def finalise(*, turn: Turn) -> str | None:
    """Decide the turn once all assigned reviews are in; returns the new status or None if still open.

    Unanimous approvals without edits → ``approved``; unanimous rejections without edits →
    ``rejected``; any disagreement or any edit → ``needs_adjudication``. Call inside a transaction
    holding the turn's row lock; ``turn_finalised`` is sent on commit for final states.
    """
    if not all_submitted(turn=turn):
        return None
    reviews = assigned_reviews(turn=turn)
    decisions = {r.decision for r in reviews}
    edited = any(r.has_edits for r in reviews)
    if decisions == {Decision.APPROVE} and not edited:
        status = TurnState.APPROVED
    elif decisions == {Decision.REJECT} and not edited:
        status = TurnState.REJECTED
    else:
        status = TurnState.NEEDS_ADJUDICATION
    set_status(turn=turn, status=status, reason=f"{len(reviews)} reviews: {', '.join(sorted(decisions))}")
    return status


def set_status(*, turn: Turn, status: str, reason: str, author: Any | None = None, via: str | None = None) -> None:
    """Change the status (recorded as a ``system`` revision). Caller holds the turn's row lock.

    Becoming ``approved`` records who approved the current version (:class:`TurnApproval`); ``via``
    says how (default: ``adjudication`` when an author is given, else ``reviews``)."""
    before = turn.status
    if before == status:
        return
    if status == TurnState.APPROVED:
        via = via or (ApprovalVia.ADJUDICATION if author is not None else ApprovalVia.REVIEWS)
        approval = record_approval(turn=turn, via=via, user=author)
        reason = f"{reason}; version {turn.version} approved by {', '.join(approval.approvers) or 'nobody named'}"
    turn.status = status
    turn.save(update_fields=["status"])
    Revision.objects.create(
        turn=turn,
        field="status",
        before=before,
        after=status,
        author=author,
        reason=reason,
        kind=RevisionKind.SYSTEM,
        version=turn.version,
    )
    if status in (TurnState.APPROVED, TurnState.REJECTED):
        turn_id = turn.pk
        transaction.on_commit(lambda: turn_finalised.send(sender=Turn, turn_id=turn_id, status=status))


# How long after submitting a reviewer may take the decision back ("Undo" after `a`).
UNDO_SECONDS = 60


def undo_blocker(*, review: Review, turn_status: str, now: Any = None) -> str:
    """Why ``review``'s submission can no longer be withdrawn ("" when it can): past the undo window,
    or the co-review is in / the turn was adjudicated (others have acted on this decision)."""
    if review.submitted_at is None:
        return _("This review is not submitted: there is nothing to undo.")
    if ((now or timezone.now()) - review.submitted_at).total_seconds() > UNDO_SECONDS:
        return _("Too late to undo: a decision can be withdrawn for %(seconds)d seconds after submitting.") % {
            "seconds": UNDO_SECONDS
        }
    if turn_status not in REVIEWABLE or review.turn.adjudications.exists():
        return _("The decision can no longer be withdrawn: every review is in and the turn was decided.")
    return ""


@transaction.atomic
def undo_submission(*, turn: Turn, reviewer: Any) -> Review:
    """Withdraw the reviewer's just-submitted review: it becomes their draft again (decision pending, edits
    kept). Only within :data:`UNDO_SECONDS` and while the turn is still in review (no co-review completed
    it, no adjudication). Locks the turn row (``select_for_update``); raises :class:`InvalidState`."""
    locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
    review = Review.objects.select_for_update().filter(turn=locked, reviewer_id=reviewer.pk).first()
    if review is None:
        raise InvalidState(_("You have no review of this turn: there is nothing to undo."))
    if why := undo_blocker(review=review, turn_status=locked.status):
        raise InvalidState(why)
    review.submitted_at = None
    review.decision, review.reject_reason = Decision.PENDING, ""
    review.save(update_fields=["submitted_at", "decision", "reject_reason", "updated"])
    return review


@transaction.atomic
def discard_draft(*, turn: Turn, reviewer: Any) -> bool:
    """Throw away the reviewer's unsubmitted draft (its edits and pending decision): the screen shows the turn as it
    is again. True if there was a draft. A submitted review is not a draft (:class:`InvalidState`; Undo withdraws
    it). Locks the turn row, as every write of a review does."""
    Turn.objects.select_for_update(no_key=True).only("pk").get(pk=turn.pk)
    review = Review.objects.select_for_update().filter(turn=turn, reviewer_id=reviewer.pk).first()
    if review is None:
        return False
    if review.submitted:
        raise InvalidState(_("You already submitted your review of this turn: use Undo to withdraw it."))
    review.delete()  # nothing refers to a draft (adjudications keep submitted reviews only)
    return True
