"""Who reviews which session: manual assignment and balanced automatic distribution."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet

from annotations.models import Assignment, TurnState
from annotations.roles import REVIEWER
from scenarios.models import Scenario, Session, SessionStatus, Turn


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


def reviewer_pool(*, usernames: Sequence[str] | None = None) -> list[Any]:
    """The reviewers to distribute over: the named users (in that order), or every active user in the
    ``reviewer`` group (by username). Raises ValueError naming unknown users or users without the role."""
    users = get_user_model().objects.filter(is_active=True)
    if usernames is None:
        pool = list(users.filter(groups__name=REVIEWER).distinct().order_by("username"))
        if not pool:
            raise ValueError(f"no active user is in the {REVIEWER!r} group")
        return pool
    names = [n.strip() for n in usernames if n.strip()]
    if not names:
        raise ValueError("no reviewer usernames given")
    found = {u.get_username(): u for u in users.filter(username__in=names).prefetch_related("groups")}
    if unknown := [n for n in names if n not in found]:
        raise ValueError(f"unknown or inactive {'user' if len(unknown) == 1 else 'users'}: {', '.join(unknown)}")
    if not_reviewers := [n for n in names if REVIEWER not in {g.name for g in found[n].groups.all()}]:
        raise ValueError(f"not in the {REVIEWER!r} group: {', '.join(not_reviewers)}")
    return [found[n] for n in dict.fromkeys(names)]


def reviewable_sessions(*, scenarios: Sequence[str] = (), tiers: Sequence[int] = ()) -> QuerySet[Session]:
    """Sessions that passed the quality gates, optionally of some scenarios / tiers, in a stable order."""
    if unknown := sorted(set(scenarios) - set(Scenario.values)):
        raise ValueError(
            f"unknown {'scenario' if len(unknown) == 1 else 'scenarios'} {', '.join(unknown)}; "
            f"choose from {', '.join(Scenario.values)}"
        )
    if bad := sorted(t for t in set(tiers) if t not in (1, 2, 3)):
        raise ValueError(
            f"unknown {'tier' if len(bad) == 1 else 'tiers'} {', '.join(map(str, bad))}; choose from 1, 2, 3"
        )
    sessions = Session.objects.exclude(status=SessionStatus.REJECTED_BY_GATE)
    if scenarios:
        sessions = sessions.filter(scenario__in=scenarios)
    if tiers:
        sessions = sessions.filter(tier__in=tiers)
    return sessions.order_by("scenario", "tier", "record_id")
