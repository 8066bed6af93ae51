"""API fixtures: token clients per role over a small review world.

``world``: session A assigned to rev1 and rev2 (turns in review), session B (tier 2, diagnostic
workup) assigned to nobody; an adjudicator and an admin. Clients authenticate with real tokens.
"""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations import services
from tests.annotations.conftest import make_user
from tests.annotations.snapshots.conftest import approve_by_review
from tests.scenarios.factories import complete_session


def token_client(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def world(db):
    rev1, rev2, rev3 = (make_user(f"rev{i}", "reviewer") for i in (1, 2, 3))
    adjudicator = make_user("adj", "adjudicator")
    admin = make_user("boss", "admin")
    a = complete_session(record_id="med_safety_a")
    b = complete_session(record_id="diagnostic_workup_b", scenario="diagnostic_workup", tier=2)
    for reviewer in (rev1, rev2):
        services.assign(session=a, reviewer=reviewer, by=admin)
    return {
        "users": {"rev1": rev1, "rev2": rev2, "rev3": rev3, "adj": adjudicator, "admin": admin},
        "a": a,
        "b": b,
    }


@pytest.fixture
def clients(world):
    """``clients["rev1"]`` etc.: a token-authenticated client per user; ``clients["anon"]`` has none."""
    out = {name: token_client(user) for name, user in world["users"].items()}
    out["anon"] = token_client(None)
    return out


@pytest.fixture
def var_dir(settings, tmp_path):
    """A private var dir for the snapshot files (modules that make snapshots use it: pytest.mark.usefixtures)."""
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    return settings.VAR_DIR


@pytest.fixture
def approved(world):
    """Session ``a`` approved by both its reviewers through the review services."""
    users = world["users"]
    approve_by_review(session=world["a"], reviewers=[users["rev1"], users["rev2"]], by=users["admin"])
    return world["a"]
