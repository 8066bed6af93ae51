"""Generating a slot looks up that one slot instead of building the run's whole plan (bench/scale.py found the
plan rebuilt for every slot: quadratic over a run). The slot it finds must be the one the plan lists.

Cases: the plans ``manage.py generate`` makes (every scenario × tier, one scenario, some tiers, sizes below,
at and above the grid, and the 5,000-session size of the scale bench), compared slot by slot with
``run_slots``, the plan itself; and indexes outside the plan, which a run does not have.
"""

import pytest

from scenarios import services
from scenarios.models import GenerationRun

PLANS = [
    (list(services.ALL_SCENARIOS), list(services.ALL_TIERS), 5_000),
    (list(services.ALL_SCENARIOS), list(services.ALL_TIERS), 12),
    (list(services.ALL_SCENARIOS), list(services.ALL_TIERS), 7),
    (["med_safety"], [1, 2, 3], 10),
    (["discharge_planning", "diagnostic_workup"], [3, 1], 25),
    (["treatment_response"], [2], 1),
]


@pytest.mark.parametrize(("scenarios", "tiers", "n"), PLANS)
def test_each_slot_is_the_plans_slot(scenarios, tiers, n):
    run = GenerationRun(parameters={"scenarios": scenarios, "tiers": tiers, "n": n}, requested=n)
    plan = services.run_slots(run=run)
    assert [services.run_slot(run=run, index=i) for i in range(n)] == plan


@pytest.mark.parametrize("index", [-1, 12, 13, 10_000])
def test_an_index_outside_the_plan_is_refused(index):
    run = GenerationRun(parameters={"scenarios": list(services.ALL_SCENARIOS), "tiers": [1, 2, 3]}, requested=12)
    with pytest.raises(ValueError, match=r"has slots 0\.\.11"):
        services.run_slot(run=run, index=index)
