"""REST API for evaluation runs: /api/runs/, /api/runs/{id}/ (summary.json) and the run's turn results."""

import pytest

from evaluation.models import TurnResult
from tests.annotations.api.conftest import token_client
from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(db):
    return token_client(make_user("api_rev", "adjudicator"))  # every session's turns (a reviewer: only theirs)


def test_anonymous_gets_401_with_the_error_body(runs):
    response = token_client(None).get("/api/runs/")
    assert response.status_code == 401
    assert set(response.json()["error"]) >= {"code", "message"}


def test_list_and_detail_carry_the_summary_json_of_the_run(runs, api):
    listed = api.get("/api/runs/").json()
    assert {r["model"] for r in listed["results"]} == {"rules:oracle", "rules:heuristic"}
    assert "summary" not in listed["results"][0]
    run, summary = runs["oracle"]
    detail = api.get(f"/api/runs/{run.pk}/").json()
    assert detail["summary"]["metrics"] == summary["metrics"]
    assert detail["manifest"]["model"] == "rules:oracle"


def test_runs_name_their_protocol(runs, api):
    run, _summary = runs["oracle"]
    type(run).objects.filter(pk=run.pk).update(manifest={**run.manifest, "protocol": {"name": "release"}})
    listed = {r["id"]: r["protocol"] for r in api.get("/api/runs/").json()["results"]}
    assert listed == {run.pk: "release", runs["heuristic"][0].pk: "physreview"}
    assert api.get(f"/api/runs/{run.pk}/").json()["protocol"] == "release"


def test_turns_are_paginated_and_filtered_like_the_drill_down(runs, api):
    run, _ = runs["heuristic"]
    total = TurnResult.objects.filter(run=run).count()
    first = api.get(f"/api/runs/{run.pk}/turns/", {"page_size": 5}).json()
    assert first["count"] == total and len(first["results"]) == 5
    assert "trace" in first["results"][0]
    zh = api.get(f"/api/runs/{run.pk}/turns/", {"language": "zh", "page_size": 100}).json()
    assert zh["count"] == TurnResult.objects.filter(run=run, language="zh").count()
    assert {r["language"] for r in zh["results"]} == {"zh"}
    failures = api.get(f"/api/runs/{run.pk}/turns/", {"show": "failures", "page_size": 100}).json()
    assert 0 < failures["count"] < total
    assert all(r["score"] is None or r["score"] < 0.6 or r["infra_error"] for r in failures["results"])


def test_bad_filter_and_unknown_run_name_the_problem(runs, api):
    run, _ = runs["oracle"]
    bad = api.get(f"/api/runs/{run.pk}/turns/", {"show": "everything"})
    assert bad.status_code == 400
    assert "show" in bad.json()["error"]["fields"]
    missing = api.get("/api/runs/999999/turns/")
    assert missing.status_code == 404
    assert api.get("/api/runs/999999/").status_code == 404
