"""Adjudication: the final decision and content of a turn whose reviews disagree or edit."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from annotations import content as tc
from annotations.models import (
    Adjudication,
    Chosen,
    Decision,
    RejectReason,
    Review,
    RevisionKind,
    TurnState,
    status_label,
)
from annotations.roles import is_adjudicator
from annotations.selectors import assigned_reviews
from annotations.services.edits import _store_conflict, apply_content
from annotations.services.errors import Conflict, InvalidState, PermissionDenied
from annotations.services.reviews import set_status
from scenarios.models import Turn


def reviews_ab(*, turn: Turn) -> tuple[Review | None, Review | None]:
    """Review A and B: the submitted assigned reviews in submission order."""
    submitted = sorted((r for r in assigned_reviews(turn=turn) if r.submitted), key=lambda r: (r.submitted_at, r.pk))
    return (submitted[0] if submitted else None), (submitted[1] if len(submitted) > 1 else None)


def adjudicate(
    *,
    turn: Turn,
    adjudicator: Any,
    chosen: str,
    content: dict[str, Any] | None = None,
    base_version: int,
    decision: str | None = None,
    reject_reason: str = "",
    reason: str = "",
    is_demo: bool = False,
) -> Adjudication:
    """Decide a turn in ``needs_adjudication``.

    ``chosen`` ``a``/``b`` takes that review's proposed content and (unless ``decision`` is given) its
    decision; ``merged``/``edited`` take ``content`` (a change set over the current content) and
    ``decision`` (default approve). The final content is written to the turn, its rubric items and step
    arguments; ``version`` is bumped; one ``adjudication`` revision per changed field is stored; the
    status becomes approved or rejected. Locks the turn row (``select_for_update``); a stale
    ``base_version`` raises :class:`Conflict` (the attempt is kept as conflict revisions).
    ``turn_finalised`` is sent after commit.
    """
    if not is_adjudicator(adjudicator):
        raise PermissionDenied(_("Only adjudicators decide disputed turns."))
    if chosen not in Chosen.values:
        raise ValueError(f"chosen must be one of {', '.join(Chosen.values)}, got {chosen!r}")
    conflict: Conflict | None = None
    with transaction.atomic():
        locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
        if locked.status != TurnState.NEEDS_ADJUDICATION:
            raise InvalidState(
                _("This turn no longer needs adjudication (it is %(status)s).")
                % {"status": status_label(locked.status)}
            )
        review_a, review_b = reviews_ab(turn=locked)
        current = tc.snapshot(turn=locked)
        if chosen in (Chosen.REVIEW_A, Chosen.REVIEW_B):
            picked = review_a if chosen == Chosen.REVIEW_A else review_b
            if picked is None:
                raise InvalidState(_("There is no review %(letter)s to take.") % {"letter": chosen.upper()})
            # The proposal is a full snapshot of its base; re-apply it over the current content.
            final = tc.apply_changes(
                base=current, changes=tc.changes_between(base=picked.base_content, proposed=picked.proposed)
            )
            decision = decision or picked.decision
            reject_reason = reject_reason or picked.reject_reason
        else:
            final = tc.apply_changes(base=current, changes=content or {})
            decision = decision or Decision.APPROVE
        if decision not in (Decision.APPROVE, Decision.REJECT):
            raise ValueError(f"decision must be approve or reject, got {decision!r}")
        if decision == Decision.REJECT and reject_reason not in RejectReason.values:
            raise ValueError(_("A rejection needs a reason: choose one."))
        if locked.version != base_version:
            conflict = _store_conflict(
                turn=locked, user=adjudicator, mine=final, base_version=base_version, reason=reason
            )
        else:
            apply_content(
                turn=locked,
                content=final,
                author=adjudicator,
                kind=RevisionKind.ADJUDICATION,
                reason=reason,
                base_version=base_version,
            )
            status = TurnState.APPROVED if decision == Decision.APPROVE else TurnState.REJECTED
            set_status(turn=locked, status=status, reason=f"adjudicated ({chosen})", author=adjudicator)
            adjudication = Adjudication.objects.create(
                turn=locked,
                adjudicator=adjudicator,
                chosen=chosen,
                review_a=review_a,
                review_b=review_b,
                decision=decision,
                reject_reason=reject_reason if decision == Decision.REJECT else "",
                reason=reason,
                content=tc.snapshot(turn=locked),
                version=locked.version,
                is_demo=is_demo,
            )
    if conflict is not None:
        raise conflict
    turn.refresh_from_db()
    return adjudication
