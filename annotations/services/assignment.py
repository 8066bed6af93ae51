"""Who reviews which session: manual assignment and balanced automatic distribution."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from annotations.models import Assignment, TurnState
from scenarios.models import Session, Turn


@transaction.atomic
def assign(*, session: Session, reviewer: Any, by: Any | None) -> Assignment:
    """Assign ``reviewer`` to ``session`` (idempotent); the session's draft turns enter review."""
    assignment, _ = Assignment.objects.get_or_create(session=session, reviewer=reviewer, defaults={"assigned_by": by})
    Turn.objects.filter(session=session, status=TurnState.DRAFT).update(status=TurnState.IN_REVIEW)
    return assignment


@transaction.atomic
def distribute(
    *, sessions: Sequence[Session], reviewers: Sequence[Any], per_session: int = 2, by: Any | None = None
) -> list[Assignment]:
    """Give every session ``per_session`` reviewers, always picking the least-loaded ones.

    Balanced round-robin: load counts every existing assignment of each reviewer, ties go to the
    reviewer earliest in ``reviewers`` after the last one picked. Idempotent: sessions that already
    have enough reviewers are left alone, so running it twice creates nothing the second time.
    Returns the assignments it created.
    """
    reviewers = list(dict.fromkeys(reviewers))
    if per_session < 1 or per_session > len(reviewers):
        raise ValueError(f"per_session={per_session} needs between 1 and {len(reviewers)} (the reviewers given)")
    load = Counter(Assignment.objects.filter(reviewer__in=reviewers).values_list("reviewer_id", flat=True))
    order = {r.pk: i for i, r in enumerate(reviewers)}
    cursor = 0
    created: list[Assignment] = []
    for session in sessions:
        have = set(Assignment.objects.filter(session=session).values_list("reviewer_id", flat=True))
        need = per_session - len(have)
        for _ in range(max(need, 0)):
            candidates = [r for r in reviewers if r.pk not in have]
            pick = min(candidates, key=lambda r: (load[r.pk], (order[r.pk] - cursor) % len(reviewers)))
            created.append(assign(session=session, reviewer=pick, by=by))
            have.add(pick.pk)
            load[pick.pk] += 1
            cursor = (order[pick.pk] + 1) % len(reviewers)
    return created
