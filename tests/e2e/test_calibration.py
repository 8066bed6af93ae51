"""Judge calibration in the browser: grade rubric items from the keyboard and with clicks, then read
the agreement page."""

import pytest

from evaluation.calibration import services
from evaluation.models import PhysicianGrade
from tests.e2e.review_helpers import login, user_with_password
from tests.evaluation.calibration.conftest import make_run, rules_passed
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _focused(page) -> str:
    return page.evaluate("document.querySelector('#items > .calibration-item.focused').dataset.item")


def _graded(page, item: int) -> None:
    """Wait until item's grade is saved and htmx has settled (the script moves focus on settle)."""
    page.wait_for_selector(f"#item-{item} .banner-ok")
    page.wait_for_selector("#items .htmx-settling", state="detached")


def test_grade_items_then_open_the_agreement_page(page, live_server, screenshot_dir):
    grader = user_with_password("dr_cal", "reviewer")
    sessions = [complete_session(), complete_session()]
    rules = make_run(sessions=sessions, judge="rules", passed=rules_passed)
    make_run(sessions=sessions, judge="llm:e2e", passed=lambda t, i, lang: True, rejudge_of=rules)
    sample = services.draw_sample(name="e2e", run_ids=[rules.pk], per_stratum=2, seed=1)

    login(page, live_server, "dr_cal")
    page.goto(f"{live_server.url}/results/calibration/")
    page.click(f"tr[data-sample='{sample.pk}'] a.grade-link")
    page.wait_for_selector("h1:has-text('Grade rubric items')")
    # The deferred script picks the current item at DOMContentLoaded, which can come after the h1 is parsed.
    page.wait_for_load_state("load")
    assert "JUDGE-REASON" not in page.content()
    first_answer = page.url

    # Keyboard: the first item is current; p passes it and moves on, f fails the second; k goes back.
    assert _focused(page) == "0"
    page.keyboard.press("p")
    _graded(page, 0)
    assert _focused(page) == "1"
    page.keyboard.press("f")
    _graded(page, 1)
    page.keyboard.press("k")
    assert _focused(page) == "0"
    page.keyboard.press("j")
    assert _focused(page) == "1"
    assert page.locator("#item-1 button.grade-fail[aria-pressed=true]").count() == 1
    page.screenshot(path=str(screenshot_dir / "calibration_grade.png"), full_page=True)

    # n opens the next answer; grade it with clicks, changing one's mind once.
    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != first_answer and "/answers/" in url)
    page.click("#item-0 button.grade-fail")
    _graded(page, 0)
    page.click("#item-0 button.grade-pass")
    page.wait_for_selector("#item-0 button.grade-pass[aria-pressed=true]")
    page.fill("#item-1 input[name=note]", "unclear dose")
    page.click("#item-1 button.grade-unsure")
    _graded(page, 1)

    grades = sorted(PhysicianGrade.objects.filter(grader=grader).values_list("item", "label", "note"))
    assert grades == [(0, "pass", ""), (0, "pass", ""), (1, "fail", ""), (1, "unsure", "unclear dose")]

    page.click("a:has-text('Agreement')")
    page.wait_for_selector("h1:has-text('Judge–physician agreement')")
    # rules, the LLM rejudge, and the rules judge on the items' compiled wording
    assert page.locator("#judge-overall tbody tr").count() == 3
    assert "95.37" in page.inner_text("#paper-reference")
    overall = {
        row.get_attribute("data-judge"): row.inner_text() for row in page.locator("#judge-overall tbody tr").all()
    }
    assert set(overall) == {"rules", "llm:e2e", "rules (compiled)"}
    page.screenshot(path=str(screenshot_dir / "calibration_agreement.png"), full_page=True)
