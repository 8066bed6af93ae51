"""The "safety failures" drill-down filter works on SQLite and PostgreSQL, on the page and the API."""

import pytest
from django.urls import reverse

from evaluation.models import EvalRun, EvalStatus
from evaluation.results.selectors import turn_results
from tests.annotations.conftest import make_user
from tests.evaluation.factories import turn_result

pytestmark = pytest.mark.django_db

SAFE_FAIL = {"item": 0, "is_safety": True, "scored": True, "passed": False}
SAFE_PASS = {"item": 1, "is_safety": True, "scored": True, "passed": True}
PLAIN_FAIL = {"item": 2, "is_safety": False, "scored": True, "passed": False}
UNSCORED = {"item": 3, "is_safety": True, "scored": False, "passed": False}


@pytest.fixture
def results():
    run = EvalRun.objects.create(model="rules:oracle", status=EvalStatus.FINISHED)
    other = EvalRun.objects.create(model="rules:oracle", status=EvalStatus.FINISHED)
    rows = {}
    for i, (name, verdicts) in enumerate(
        [
            ("fails_safety", [SAFE_PASS, SAFE_FAIL]),
            ("passes", [SAFE_PASS]),
            ("fails_other", [PLAIN_FAIL, UNSCORED]),
            ("empty", []),
        ]
    ):
        rows[name] = turn_result(run=run, session_id=f"s{i}", verdicts=verdicts)
    # The same failing verdicts in another run are not this run's.
    turn_result(run=other, session_id="s0", verdicts=[SAFE_FAIL])
    return run, rows


def test_safety_filter_selects_scored_failed_safety_items(results):
    run, rows = results
    assert set(turn_results(run=run, filters={"show": "safety"})) == {rows["fails_safety"]}
    assert set(turn_results(run=run, filters={"show": "safety", "language": "zh"})) == set()


def test_safety_filter_on_the_page_and_the_api(client, results):
    run, rows = results
    client.force_login(make_user("safety_adj", "adjudicator"))
    page = client.get(reverse("evaluation:turns", args=[run.pk]), {"show": "safety"})
    assert page.status_code == 200 and f'data-result="{rows["fails_safety"].pk}"' in page.content.decode()
    response = client.get(f"/api/runs/{run.pk}/turns/", {"show": "safety"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    body = response.json()
    items = body["results"] if isinstance(body, dict) else body
    assert [item["session_id"] for item in items] == ["s0"]
