"""The review screen over sessions made by the real generator on the bundled cohort."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations import services
from ehr.models import LabEvent
from scenarios import services as generation
from tests.annotations.conftest import make_user


@pytest.fixture
def generated(demo_cohort):
    run = generation.create_run(backend="rules", seed=7, scenarios=list(generation.ALL_SCENARIOS), tiers=[3], n=4)
    return [generation.generate_slot(run_id=run.pk, index=i) for i in range(4)]


def test_every_generated_turn_renders_with_bounded_evidence(client, generated):
    reviewer = make_user("gen_rev", "reviewer")
    for session in generated:
        services.assign(session=session, reviewer=reviewer, by=None)
    client.force_login(reviewer)
    client.get(reverse("annotations:queue"))
    queries = []
    saw_replies = saw_table = False
    for session in generated:
        for turn in session.turns.order_by("index"):
            cache.clear()  # render the evidence each time (it is cached per admission and date)
            with CaptureQueriesContext(connection) as captured:
                response = client.get(reverse("annotations:turn", args=[turn.pk]))
            assert response.status_code == 200
            queries.append(len(captured))
            labs = response.context["evidence"]["labs"]
            # The release's cutoff: nothing of the current date itself is charted yet.
            assert all(p.charttime.date() < session.current_date for s in labs for p in s.points)
            later = LabEvent.objects.filter(hadm_id=session.hadm_id, charttime__date__gte=session.current_date)
            assert len({p.pk for s in labs for p in s.points}) == (
                LabEvent.objects.filter(hadm_id=session.hadm_id).count() - later.count()
            )
            saw_replies |= 'id="patient-replies"' in response.text
            saw_table |= "<th>Resource</th>" in response.text
    assert saw_replies and saw_table
    # Constant in the size of the session and the record: every turn costs the same number of queries.
    assert max(queries) - min(queries) <= 1, queries
