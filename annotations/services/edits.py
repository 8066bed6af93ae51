"""Direct edits of a turn's content with optimistic locking; conflicts are stored, then merged.

Reviewers edit inside their own blind review (annotations.services.reviews); these services change
the turn itself and are for adjudicators and admins.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotations import content as tc
from annotations.diffs import diff_field
from annotations.models import Revision, RevisionKind
from annotations.roles import is_adjudicator
from annotations.services.confirmation import after_content_change
from annotations.services.errors import Conflict, PermissionDenied
from annotations.services.gates import turn_warnings
from scenarios.models import Turn


def apply_content(
    *, turn: Turn, content: dict[str, Any], author: Any, kind: str, reason: str, base_version: int
) -> list[Revision]:
    """Write a full snapshot to a turn whose row the caller has locked, bump ``version`` once and
    store one revision per changed field. No change → nothing written, version unchanged."""
    before = tc.snapshot(turn=turn)
    changes = tc.changed_fields(before=before, after=content)
    if not changes:
        return []
    turn.version += 1
    tc.write(turn=turn, content=content)
    rows = Revision.objects.bulk_create(
        Revision(
            turn=turn,
            field=name,
            before=old,
            after=new,
            author=author,
            reason=reason,
            kind=kind,
            base_version=base_version,
            version=turn.version,
        )
        for name, old, new in changes
    )
    # Approval belongs to a version: an approved turn just edited needs someone else's confirmation.
    after_content_change(turn=turn, author=author)
    return rows


def _store_conflict(*, turn: Turn, user: Any, mine: dict[str, Any], base_version: int, reason: str) -> Conflict:
    """Keep a stale save as ``conflict`` revisions (before = current value, after = the user's value)."""
    current = tc.snapshot(turn=turn)
    changes = tc.changed_fields(before=current, after=mine)
    rows = Revision.objects.bulk_create(
        Revision(
            turn=turn,
            field=name,
            before=old,
            after=new,
            author=user,
            reason=reason,
            kind=RevisionKind.CONFLICT,
            base_version=base_version,
            version=None,
        )
        for name, old, new in changes
    )
    return Conflict(
        base_version=base_version,
        current_version=turn.version,
        mine=mine,
        current=current,
        diffs=[diff_field(name, old, new) for name, old, new in changes],
        revision_ids=[r.pk for r in rows],
    )


def _save(
    *,
    turn: Turn,
    user: Any,
    changes: dict[str, Any],
    base_version: int,
    kind: str,
    reason: str,
    settled: Iterable[str] = (),
) -> tuple[Turn, list[Revision], list[dict[str, Any]]]:
    if not is_adjudicator(user):
        raise PermissionDenied(
            _("Only adjudicators and admins edit a turn directly; reviewers propose edits in their review.")
        )
    conflict: Conflict | None = None
    revisions: list[Revision] = []
    with transaction.atomic():
        locked = Turn.objects.select_for_update(no_key=True).get(pk=turn.pk)
        current = tc.snapshot(turn=locked)
        mine = tc.apply_changes(base=current, changes=changes)  # validates before anything is stored
        # What the calls returned before this save: the evidence gate names a step whose result changed.
        previous = {s.idx: s.observation for s in locked.steps.all()}
        if locked.version != base_version:
            # Commit the conflict rows (the attempt is kept), then tell the caller.
            conflict = _store_conflict(turn=locked, user=user, mine=mine, base_version=base_version, reason=reason)
        else:
            revisions = apply_content(
                turn=locked, content=mine, author=user, kind=kind, reason=reason, base_version=base_version
            )
            if kind == RevisionKind.MERGE:
                # Only the fields this merge wrote or explicitly settled: another field's stale value
                # stays pending (shown again on the review screen), not silently marked merged.
                fields = {r.field for r in revisions} | set(settled)
                Revision.objects.filter(
                    turn=locked, author=user, kind=RevisionKind.CONFLICT, resolved_at__isnull=True, field__in=fields
                ).update(resolved_at=timezone.now())
    if conflict is not None:
        raise conflict
    turn.refresh_from_db()
    return turn, revisions, turn_warnings(turn=turn, content=tc.snapshot(turn=turn), previous=previous)


def save_turn_edit(
    *, turn: Turn, user: Any, changes: dict[str, Any], base_version: int, reason: str = ""
) -> tuple[Turn, list[Revision], list[dict[str, Any]]]:
    """Apply ``changes`` (a partial content snapshot) to the turn if it is still at ``base_version``.

    Returns ``(turn, revisions, gate_warnings)``. Locks the turn row (``select_for_update``), so two
    concurrent saves from the same base serialise: the first wins and bumps ``version``, the second
    raises :class:`Conflict`. Before raising, the stale attempt is committed as ``conflict`` revisions
    (nothing is lost) and the Conflict carries the user's text, the current text and the diff.
    Leases are not checked here (they are advisory; the view takes one before opening the editor).
    """
    return _save(
        turn=turn, user=user, changes=changes, base_version=base_version, kind=RevisionKind.REVIEW_EDIT, reason=reason
    )


def merge(
    *,
    turn: Turn,
    user: Any,
    changes: dict[str, Any],
    base_version: int,
    reason: str = "merge",
    settled: Iterable[str] = (),
) -> tuple[Turn, list[Revision], list[dict[str, Any]]]:
    """Save the user's merged text on top of the current version (``base_version`` = the version the
    Conflict reported) and mark resolved the user's open conflicts on the fields the merge changed,
    plus ``settled`` (flattened fields the user decided on, e.g. kept the current text). Other open
    conflicts stay pending. Same locking and conflict rules as :func:`save_turn_edit`."""
    return _save(
        turn=turn,
        user=user,
        changes=changes,
        base_version=base_version,
        kind=RevisionKind.MERGE,
        reason=reason,
        settled=settled,
    )


def pending_conflicts(*, turn: Turn, user: Any) -> dict[str, Any]:
    """The user's unmerged stale values per field (latest wins): what a reopened editor restores."""
    rows = Revision.objects.filter(turn=turn, author=user, kind=RevisionKind.CONFLICT, resolved_at__isnull=True)
    return {r.field: r.after for r in rows.order_by("created", "pk")}


def unapplied(*, turn: Turn, user: Any) -> Conflict | None:
    """The user's pending conflicts on ``turn`` as a Conflict against the current content (what the
    review screen offers to merge on reopening), or None when there are none."""
    rows = list(
        Revision.objects.filter(turn=turn, author=user, kind=RevisionKind.CONFLICT, resolved_at__isnull=True).order_by(
            "created", "pk"
        )
    )
    if not rows:
        return None
    current = tc.snapshot(turn=turn)
    pending = {r.field: r.after for r in rows}  # latest wins
    flat = tc.flatten(current)
    diffs = [diff_field(name, flat.get(name), after) for name, after in pending.items() if flat.get(name) != after]
    if not diffs:
        return None
    try:
        mine = tc.apply_flat(base=current, flat={d.field: pending[d.field] for d in diffs})
    except tc.InvalidContent:  # e.g. a step that no longer exists: the diffs still show the values
        mine = current
    return Conflict(
        base_version=min(r.base_version or turn.version for r in rows),
        current_version=turn.version,
        mine=mine,
        current=current,
        diffs=diffs,
        revision_ids=[r.pk for r in rows],
    )
