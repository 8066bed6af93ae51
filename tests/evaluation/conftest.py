"""Generated sessions over the demo cohort (rules backend), as the demo makes them."""

import pytest

from scenarios import services
from scenarios.models import Session


def make_sessions(*, n: int, seed: int = 7) -> list[Session]:
    run = services.create_run(
        backend="rules",
        seed=seed,
        scenarios=["diagnostic_workup", "med_safety", "treatment_response", "discharge_planning"],
        tiers=[1, 2, 3],
        n=n,
    )
    for slot in services.run_slots(run=run):
        services.generate_slot(run_id=run.pk, index=slot.index)
    return list(Session.objects.filter(run=run).order_by("record_id"))


@pytest.fixture
def sessions(demo_cohort):
    made = make_sessions(n=6)
    assert len(made) >= 4, "the rules generator should make most of 6 sessions"
    return made
