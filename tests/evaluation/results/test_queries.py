"""Page query counts do not grow with the number of turns of a run."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluation.models import TurnResult
from tests.evaluation.results.conftest import make_run


def _count(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.fixture
def small_and_large(sessions, tmp_path):
    small, _ = make_run(tmp_path / "s", "--model", "rules:heuristic", "--limit", "1", "--sessions", "all")
    large, _ = make_run(
        tmp_path / "l", "--model", "rules:heuristic", "--language", "both", "--variant", "both", "--sessions", "all"
    )
    assert TurnResult.objects.filter(run=large).count() >= 8 * TurnResult.objects.filter(run=small).count()
    return small, large


def test_query_counts_constant_in_turns(reviewer_client, small_and_large, django_assert_max_num_queries):
    small, large = small_and_large
    pages = {
        "run": lambda run: reverse("evaluation:run", args=[run.pk]),
        "turns": lambda run: reverse("evaluation:turns", args=[run.pk]),
        "failures": lambda run: reverse("evaluation:turns", args=[run.pk]) + "?show=failures&language=en",
        "turn": lambda run: reverse(
            "evaluation:turn", args=[run.pk, TurnResult.objects.filter(run=run).order_by("-pk").first().pk]
        ),
    }
    for name, url in pages.items():
        few, large_url = _count(reviewer_client, url(small)), url(large)
        with django_assert_max_num_queries(few, info=name):
            reviewer_client.get(large_url)
        assert few <= 12, name
    # The leaderboard reads one row per run (summaries), never turn results.
    with CaptureQueriesContext(connection) as ctx:
        reviewer_client.get(reverse("evaluation:leaderboard"))
    assert not any("turnresult" in q["sql"] for q in ctx.captured_queries)
    assert len(ctx.captured_queries) <= 6
