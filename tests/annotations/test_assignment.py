from collections import Counter

import pytest

from annotations import services
from annotations.models import Assignment, TurnState
from tests.scenarios.factories import complete_session


def test_distribute_balances_reviewers_and_is_idempotent(reviewers, admin_user):
    sessions = [complete_session() for _ in range(6)]
    created = services.distribute(sessions=sessions, reviewers=reviewers, per_session=2, by=admin_user)
    assert len(created) == 12
    load = Counter(a.reviewer.username for a in Assignment.objects.all())
    assert load == {"rev1": 4, "rev2": 4, "rev3": 4}
    for s in sessions:
        assert s.assignments.count() == 2
        assert set(s.turns.values_list("status", flat=True)) == {TurnState.IN_REVIEW}
    assert services.distribute(sessions=sessions, reviewers=reviewers, per_session=2) == []
    assert Assignment.objects.count() == 12


def test_distribute_tops_up_and_accounts_for_existing_load(reviewers, admin_user):
    sessions = [complete_session() for _ in range(3)]
    services.assign(session=sessions[0], reviewer=reviewers[0], by=admin_user)
    services.distribute(sessions=sessions, reviewers=reviewers, per_session=2)
    assert all(s.assignments.count() == 2 for s in sessions)
    load = Counter(Assignment.objects.values_list("reviewer__username", flat=True))
    assert sorted(load.values()) == [2, 2, 2]


def test_distribute_needs_enough_reviewers(reviewers):
    with pytest.raises(ValueError, match="per_session=4"):
        services.distribute(sessions=[complete_session()], reviewers=reviewers, per_session=4)


def test_assign_is_idempotent(session, reviewers, admin_user):
    a = services.assign(session=session, reviewer=reviewers[0], by=admin_user)
    b = services.assign(session=session, reviewer=reviewers[0], by=None)
    assert a.pk == b.pk and b.assigned_by == admin_user
