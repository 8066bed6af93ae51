"""Every screen of the review flow in English and Chinese, in Chromium: each answers, is in the chosen UI
language, shows no raw machine status, and is saved as a screenshot under ``var/screenshots/screens/``."""

import re

import pytest
from django.core.management import call_command

from annotations import services
from tests.e2e.review_helpers import PASSWORD, open_editor, user_with_password
from tests.e2e.test_adjudication_e2e import _disagree
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
RAW_STATUS = re.compile(r"\b(?:needs_adjudication|in_review|rubric\.\d+\.text_(?:en|zh))\b")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def flow(tmp_path):
    """A session in review by two reviewers: turn 0 in dispute (needs adjudication), turn 1 approved by
    the first reviewer only, and a finished rules run over it."""
    rev_a, rev_b = user_with_password("scr_ann", "reviewer"), user_with_password("scr_ben", "reviewer")
    user_with_password("scr_carl", "adjudicator")
    session = complete_session()
    for reviewer in (rev_a, rev_b):
        services.assign(session=session, reviewer=reviewer, by=None)
    disputed, approved = session.turns.get(index=0), session.turns.get(index=1)
    _disagree(disputed, rev_a, rev_b)
    services.submit_review(turn=approved, reviewer=rev_a, decision="approve", base_version=approved.version)
    call_command("runeval", "--model", "rules:oracle", "--sessions", "all", "--quiet", "--output", str(tmp_path))
    from evaluation.models import EvalRun, TurnResult

    run = EvalRun.objects.latest("pk")
    fresh = session.turns.get(index=2)
    return {
        "disputed": disputed,
        "approved": approved,
        "fresh": fresh,
        "run": run,
        "result": TurnResult.objects.filter(run=run)[0],
    }


def _visit(page, url: str, *, language: str, shot) -> str:
    response = page.goto(url)
    assert response is not None and response.status < 500, f"{url}: HTTP {response and response.status}"
    page.wait_for_load_state()
    assert page.get_attribute("html", "lang") == ("zh-hans" if language == "zh" else "en"), url
    text = page.inner_text("body")
    assert not RAW_STATUS.search(text), f"{url} shows a raw status: {RAW_STATUS.search(text).group()}"
    if language == "zh":
        assert CJK.search(page.inner_text("header") if page.locator("header").count() else text), url
    page.screenshot(path=str(shot), full_page=True)
    return text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_screen_of_the_review_flow(browser, live_server, screenshot_dir, flow, language):
    out = screenshot_dir / "screens" / language
    out.mkdir(parents=True, exist_ok=True)
    cookie = {"name": "django_language", "value": "zh-hans" if language == "zh" else "en", "url": live_server.url}
    base, turn, run = live_server.url, flow["disputed"], flow["run"]
    screens = {
        "scr_ann": [
            ("login", "/accounts/login/"),
            ("queue", "/review/"),
            ("review", f"/review/turns/{flow['approved'].pk}/"),
            ("done", "/review/done/"),
            ("history", f"/review/history/{turn.pk}/"),
            ("patients", "/ehr/patients/"),
            ("not_found", "/review/turns/999999/"),
        ],
        "scr_carl": [
            ("adjudication_queue", "/review/"),
            ("adjudicate", f"/review/adjudicate/{turn.pk}/"),
            ("dashboard", "/review/dashboard/"),
            ("results", "/results/"),
            ("run", f"/results/runs/{run.pk}/"),
            ("run_turns", f"/results/runs/{run.pk}/turns/"),
            ("run_turn", f"/results/runs/{run.pk}/turns/{flow['result'].pk}/"),
        ],
    }
    for username, pages in screens.items():
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_cookies([cookie])
        page = context.new_page()
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_load_state()
        for name, path in pages:
            _visit(page, f"{base}{path}", language=language, shot=out / f"{username}_{name}.png")
        if username == "scr_ann":
            _gate_warnings(page, f"{base}/review/turns/{flow['fresh'].pk}/", language=language, shot=out)
        context.close()
    assert len(list(out.glob("*.png"))) == sum(len(p) for p in screens.values()) + 2


def _gate_warnings(page, url: str, *, language: str, shot) -> None:
    """A draft with a number the record does not hold: its quality-gate warning in the UI language."""
    _visit(page, url, language=language, shot=shot / "scr_ann_review_fresh.png")
    open_editor(page)
    page.fill("#field-answer_en", page.input_value("#field-answer_en") + " Potassium was 987.6 mmol/L.")
    page.click("#save-draft")
    page.wait_for_selector("#gate-warnings")
    warnings = page.inner_text("#gate-warnings")
    if language == "zh":
        assert "不见于任何工具返回结果" in warnings and "not in any observation" not in warnings, warnings
        assert "标准答案" in warnings and "answer:" not in warnings, warnings
    else:
        assert re.search(r"answer: [\d., ]*987\.6[\d., ]* not in any observation", warnings), warnings
    page.screenshot(path=str(shot / "scr_ann_gate_warnings.png"), full_page=True)
