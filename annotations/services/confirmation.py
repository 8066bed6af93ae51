"""Approval belongs to a version: approvals recorded per version, edits of approved turns confirmed.

Every time a turn becomes ``approved`` (unanimous reviews, adjudication, confirmation, revert) a
:class:`TurnApproval` row records the version, who approved it and the content approved. An edit of an
approved turn, by anyone and through any path (review screen, API ``target=turn``, merge), puts it in
``needs_confirmation``: it leaves the curated set until an adjudicator or admin other than the
editor(s) confirms the new version or reverts to the approved one. Snapshots take a session only
while every turn's current version has an approval (annotations.snapshots.freeze).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from annotations import content as tc
from annotations.models import ApprovalVia, Decision, Revision, RevisionKind, TurnApproval, TurnState
from annotations.roles import is_adjudicator
from annotations.selectors import assigned_reviews
from annotations.services.errors import InvalidState, PermissionDenied
from scenarios.models import Turn

# Revisions that change the content (a status change or a stored conflict does not).
CONTENT_KINDS = (RevisionKind.REVIEW_EDIT, RevisionKind.MERGE, RevisionKind.ADJUDICATION, RevisionKind.REVERT)


def record_approval(*, turn: Turn, via: str, user: Any | None = None) -> TurnApproval:
    """Record that ``turn`` is approved at its current version (caller holds the row lock)."""
    if via == ApprovalVia.REVIEWS:
        approvers = [r.reviewer.username for r in assigned_reviews(turn=turn) if r.decision == Decision.APPROVE]
    else:
        approvers = [user.username] if user is not None else []
    approval, _ = TurnApproval.objects.update_or_create(
        turn=turn,
        version=turn.version,
        defaults={
            "via": via,
            "approved_by": user,
            "approvers": sorted(set(approvers)),
            "content": tc.snapshot(turn=turn),
        },
    )
    return approval


def latest_approval(*, turn: Turn) -> TurnApproval | None:
    return TurnApproval.objects.filter(turn=turn).order_by("-version").first()


def editors_since_approval(*, turn: Turn) -> set[int]:
    """Ids of the users whose content changes made the versions after the latest approval."""
    approval = latest_approval(turn=turn)
    since = approval.version if approval else 0
    rows = Revision.objects.filter(turn=turn, kind__in=CONTENT_KINDS, version__gt=since, author__isnull=False)
    return set(rows.values_list("author_id", flat=True))


def after_content_change(*, turn: Turn, author: Any | None) -> None:
    """Called by every writer of a turn's content once it is written (caller holds the row lock): an
    approved turn goes to ``needs_confirmation``; its approval stays with the version it was given to."""
    from annotations.services.reviews import set_status  # reviews imports this module

    if turn.status != TurnState.APPROVED:
        return
    approval = latest_approval(turn=turn)
    approved = f"version {approval.version}" if approval else "an earlier version"
    set_status(
        turn=turn,
        status=TurnState.NEEDS_CONFIRMATION,
        reason=f"edited after approval of {approved}: version {turn.version} needs confirmation by someone else",
        author=author,
    )


def confirmation_queue() -> QuerySet[Turn]:
    """Turns whose edit after approval waits for a second look, oldest session first."""
    return (
        Turn.objects.filter(status=TurnState.NEEDS_CONFIRMATION)
        .select_related("session")
        .order_by("session__record_id", "index")
    )


def _check(*, locked: Turn, user: Any, base_version: int) -> None:
    if not is_adjudicator(user):
        raise PermissionDenied(_("Only adjudicators and admins confirm or revert an edit of an approved turn."))
    if locked.status != TurnState.NEEDS_CONFIRMATION:
        raise InvalidState(_("This turn has no edit waiting for confirmation."))
    if locked.version != base_version:
        raise InvalidState(
            _("The turn changed since you opened it (version %(now)d, you saw %(seen)d): look again.")
            % {"now": locked.version, "seen": base_version}
        )


def confirm_edit(*, turn: Turn, user: Any, base_version: int) -> TurnApproval:
    """Approve the current (edited) version. The confirmer must not be one of its editors. Locks the
    turn row (``select_for_update``); raises :class:`PermissionDenied` / :class:`InvalidState`."""
    from annotations.services.reviews import set_status

    with transaction.atomic():
        locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
        _check(locked=locked, user=user, base_version=base_version)
        if user.pk in editors_since_approval(turn=locked):
            raise PermissionDenied(_("Someone other than the editor must confirm this edit."))
        set_status(
            turn=locked,
            status=TurnState.APPROVED,
            reason=f"edit confirmed: version {locked.version} approved",
            author=user,
            via=ApprovalVia.CONFIRMATION,
        )
        approval = TurnApproval.objects.get(turn=locked, version=locked.version)
    turn.refresh_from_db()
    return approval


def revert_edit(*, turn: Turn, user: Any, base_version: int, reason: str = "") -> TurnApproval:
    """Write the content of the latest approved version back (a new version, ``revert`` revisions) and
    approve it. The content is one someone else approved, so the editor may revert their own edit.
    Locks the turn row; raises :class:`PermissionDenied` / :class:`InvalidState`."""
    from annotations.services.edits import apply_content
    from annotations.services.reviews import set_status

    with transaction.atomic():
        locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
        _check(locked=locked, user=user, base_version=base_version)
        approval = latest_approval(turn=locked)
        if approval is None or not approval.content:
            raise InvalidState(_("There is no approved version of this turn to go back to."))
        apply_content(
            turn=locked,
            content=approval.content,
            author=user,
            kind=RevisionKind.REVERT,
            reason=reason or f"edit reverted to approved version {approval.version}",
            base_version=base_version,
        )
        set_status(
            turn=locked,
            status=TurnState.APPROVED,
            reason=f"reverted to the content of approved version {approval.version}",
            author=user,
            via=ApprovalVia.REVERT,
        )
        new = TurnApproval.objects.get(turn=locked, version=locked.version)
        # The content is the one approved before: keep its approvers beside the one who reverted.
        new.approvers = sorted({*approval.approvers, *new.approvers})
        new.save(update_fields=["approvers"])
    turn.refresh_from_db()
    return new
