"""Fixtures for the review domain: users in the demo roles and sessions shaped like generated ones."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotations import services
from tests.scenarios.factories import complete_session


def make_user(username: str, role: str):
    user = get_user_model().objects.create_user(username=username, password="x")
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def approve_as_is(turns) -> None:
    """Mark ``turns`` (a queryset) approved at their current version without a review, as a fixture
    shortcut: the status and the per-version approval a snapshot requires (issue 32)."""
    from annotations.content import snapshot
    from annotations.models import ApprovalVia, TurnApproval, TurnState

    turns.update(status=TurnState.APPROVED)
    for turn in turns.model.objects.filter(pk__in=turns.values("pk")):
        TurnApproval.objects.update_or_create(
            turn=turn, version=turn.version, defaults={"via": ApprovalVia.MIGRATION, "content": snapshot(turn=turn)}
        )


@pytest.fixture
def reviewers(db):
    return [make_user(f"rev{i}", "reviewer") for i in range(1, 4)]


@pytest.fixture
def adjudicator(db):
    return make_user("adj", "adjudicator")


@pytest.fixture
def admin_user(db):
    return make_user("boss", "admin")


@pytest.fixture
def session(db):
    return complete_session()


@pytest.fixture
def assigned(session, reviewers, admin_user):
    """The session assigned to rev1 and rev2 (turns now in review)."""
    for reviewer in reviewers[:2]:
        services.assign(session=session, reviewer=reviewer, by=admin_user)
    return session


@pytest.fixture
def turn(assigned):
    return assigned.turns.get(index=0)
