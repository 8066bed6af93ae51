"""Fixtures for snapshots: approved sessions (through real reviews), files under a temporary VAR_DIR."""

from __future__ import annotations

import pytest

from annotations import services
from annotations.models import TurnState
from scenarios.models import Turn
from tests.annotations.conftest import approve_as_is, make_user
from tests.scenarios.factories import GenerationRunFactory, complete_session


def approve_by_review(*, session, reviewers, by) -> None:
    """Assign two reviewers and let both approve every turn: the turns become approved for real."""
    for reviewer in reviewers:
        services.assign(session=session, reviewer=reviewer, by=by)
    for turn in session.turns.order_by("index"):
        for reviewer in reviewers:
            turn.refresh_from_db()
            services.submit_review(turn=turn, reviewer=reviewer, decision="approve", base_version=turn.version)
    assert set(session.turns.values_list("status", flat=True)) == {TurnState.APPROVED}


def approve_directly(session) -> None:
    approve_as_is(Turn.objects.filter(session=session))


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    return settings.VAR_DIR


@pytest.fixture
def people(db):
    return {
        "rev1": make_user("rev1", "reviewer"),
        "rev2": make_user("rev2", "reviewer"),
        "boss": make_user("boss", "admin"),
    }


@pytest.fixture
def curated(people):
    """Three sessions: two approved through review (med_safety L1, diagnostic_workup L2, with Chinese),
    one left in review (excluded from snapshots)."""
    a = complete_session(record_id="med_safety_0", run=GenerationRunFactory(), run_index=0)
    b = complete_session(record_id="diagnostic_workup_0", scenario="diagnostic_workup", tier=2)
    pending = complete_session(record_id="med_safety_1")
    for session in (a, b):
        approve_by_review(session=session, reviewers=[people["rev1"], people["rev2"]], by=people["boss"])
    services.assign(session=pending, reviewer=people["rev1"], by=people["boss"])
    return {"approved": [a, b], "pending": pending}
