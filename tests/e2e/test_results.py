"""Results in the browser: the leaderboard, sorting, comparing two runs and a failing turn's drill-down."""

import json

import pytest
from django.core.management import call_command

from evaluation.models import EvalRun, TurnResult
from tests.e2e.review_helpers import login, user_with_password
from tests.evaluation.conftest import make_sessions

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _run(tmp_path, model):
    out = tmp_path / model.replace(":", "_")
    call_command(
        "runeval", "--model", model, "--language", "both", "--sessions", "all", "--quiet", "--output", str(out)
    )
    return EvalRun.objects.get(pk=json.loads((out / "summary.json").read_text())["run_id"])


def test_leaderboard_compare_and_drill_down(page, live_server, screenshot_dir, demo_cohort, tmp_path):
    make_sessions(n=4)
    oracle, heuristic = _run(tmp_path, "rules:oracle"), _run(tmp_path, "rules:heuristic")
    user_with_password("res_rita", "adjudicator")  # every session's turns (a reviewer: only their own)
    login(page, live_server, "res_rita")

    page.click("nav >> text=Results")
    page.wait_for_selector("#leaderboard")
    ids = lambda: [int(r.get_attribute("data-run")) for r in page.query_selector_all("#leaderboard tbody tr")]  # noqa: E731
    assert set(ids()) == {oracle.pk, heuristic.pk}
    # Sort by EN mRS L1 with the keyboard: the header is a link.
    page.focus("a[data-sort=en_L1]")
    page.keyboard.press("Enter")
    page.wait_for_url("**sort=en_L1**")
    assert ids() == [oracle.pk, heuristic.pk]  # descending: the oracle first
    page.click("a[data-sort=en_L1]")
    page.wait_for_url("**dir=asc**")
    assert ids() == [heuristic.pk, oracle.pk]
    assert page.get_attribute("a[data-sort=en_L1] >> xpath=..", "aria-sort") == "ascending"
    page.screenshot(path=str(screenshot_dir / "results_leaderboard.png"), full_page=True)

    # Compare: heuristic as A, oracle as B.
    page.check(f"input[name=a][value='{heuristic.pk}']")
    page.check(f"input[name=b][value='{oracle.pk}']")
    page.click("#compare-button")
    page.wait_for_selector("#compare-headline")
    delta = page.inner_text("#compare-headline tr[data-key=en_L1] td:last-child")
    assert delta.startswith("+")
    assert page.locator("table.slice-delta[data-dimension=scenario] tbody tr").count() >= 1
    page.screenshot(path=str(screenshot_dir / "results_compare.png"), full_page=True)

    # Run page with charts, then its failures and one failing turn.
    page.click(f"a[href='/results/runs/{heuristic.pk}/']")
    page.wait_for_selector("#run-metrics")
    assert page.locator("svg.results-chart").count() >= 6
    page.screenshot(path=str(screenshot_dir / "results_run.png"), full_page=True)
    page.click("#failures-link")
    page.wait_for_selector("#turn-results")
    first = page.locator("#turn-results tbody tr[data-result]").first
    result = TurnResult.objects.get(pk=int(first.get_attribute("data-result")))
    assert result.score is None or result.score < 0.6
    first.locator("a").click()
    page.wait_for_selector("#verdicts")
    assert page.inner_text("#model-answer") == result.trace["answer"]
    assert page.locator("#gold-answer").count() == 1
    assert page.locator("#verdicts tbody tr").count() == len(result.verdicts)
    page.screenshot(path=str(screenshot_dir / "results_turn.png"), full_page=True)
