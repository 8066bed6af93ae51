"""The leaderboard's wide table scrolls inside its own box, with a visible cue (issue 35, polish: "the
leaderboard table overflows its box with no cue"). At 768 and 390 px the page itself never scrolls sideways;
the table box does, says so ("scroll →" hint) and shades the edge that hides columns. Case: one finished run of
the rules oracle over the generated sessions, as tests/e2e/test_results.py plays them."""

import json

import pytest
from django.core.management import call_command

from evaluation.models import EvalRun
from tests.e2e.review_helpers import login, user_with_password
from tests.evaluation.conftest import make_sessions

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
BOX = """() => {
  const box = document.querySelector('#leaderboard').closest('.table-scroll');
  const style = getComputedStyle(box);
  return {id: box.id, scrollWidth: box.scrollWidth, clientWidth: box.clientWidth, overflowX: style.overflowX,
          classes: box.className, background: style.backgroundImage, right: box.getBoundingClientRect().right};
}"""


def test_wide_table_scrolls_in_its_box_with_a_cue(page, live_server, screenshot_dir, demo_cohort, tmp_path):
    make_sessions(n=1)
    call_command(
        "runeval",
        "--model",
        "rules:oracle",
        "--language",
        "both",
        "--sessions",
        "all",
        "--quiet",
        "--output",
        str(tmp_path / "oracle"),
    )
    run_id = json.loads((tmp_path / "oracle" / "summary.json").read_text())["run_id"]
    assert EvalRun.objects.filter(pk=run_id).exists()
    user_with_password("res_wide", "adjudicator")
    login(page, live_server, "res_wide")
    for width in (768, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/results/")
        page.wait_for_selector("#leaderboard")
        assert page.evaluate(SIDEWAYS) <= 0, f"the results page scrolls sideways at {width} px"
        box = page.evaluate(BOX)
        assert box["overflowX"] == "auto" and box["scrollWidth"] > box["clientWidth"], box
        assert box["right"] <= width, box  # the box itself fits the viewport
        # The cue: a hint naming the sideways scroll, and a shadow on the edge that hides columns.
        hint = page.locator(f"[data-scroll-hint-for='{box['id']}']")
        assert hint.is_visible() and "→" in hint.inner_text()
        assert "overflow-right" in box["classes"] and "gradient" in box["background"], box
        page.screenshot(path=str(screenshot_dir / f"leaderboard_{width}px.png"))
        # Scrolling the box (not the page) reveals the hidden columns; at the far end the right shade goes.
        page.evaluate(f"() => {{ const b = document.getElementById('{box['id']}'); b.scrollLeft = b.scrollWidth; }}")
        page.wait_for_function(f"() => !document.getElementById('{box['id']}').classList.contains('overflow-right')")
        assert "overflow-left" in page.evaluate(BOX)["classes"]
        assert page.evaluate(SIDEWAYS) <= 0


# The run page's figures and its turn list are as wide; the same box, hint and shade (at 390 px, the narrowest).
OTHER_TABLES = {"runs/{id}/": "#run-metrics", "runs/{id}/turns/": "#turn-results"}


def test_run_and_turn_tables_scroll_in_their_box(page, live_server, demo_cohort, tmp_path):
    make_sessions(n=1)
    call_command(
        "runeval",
        "--model",
        "rules:oracle",
        "--language",
        "both",
        "--sessions",
        "all",
        "--quiet",
        "--output",
        str(tmp_path / "oracle"),
    )
    run_id = json.loads((tmp_path / "oracle" / "summary.json").read_text())["run_id"]
    user_with_password("res_narrow", "adjudicator")
    login(page, live_server, "res_narrow")
    page.set_viewport_size({"width": 390, "height": 900})
    for path, table in OTHER_TABLES.items():
        page.goto(f"{live_server.url}/results/{path.format(id=run_id)}")
        page.wait_for_selector(table)
        page.wait_for_load_state("load")
        assert page.evaluate(SIDEWAYS) <= 0, path
        box = page.evaluate(BOX.replace("#leaderboard", table))
        assert box["scrollWidth"] > box["clientWidth"] and "overflow-right" in box["classes"], (path, box)
        assert page.locator(f"[data-scroll-hint-for='{box['id']}']").is_visible(), path
