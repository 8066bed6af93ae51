"""Issue 32, item 3, in Chromium: a reviewer changes a gold call's code ("ptt" → "inr") on the review
screen; the call is re-run and the draft save warns that the answer's PTT value is no longer supported by
that step, in English and, after switching the UI language, in Chinese.

The session is built on a bundled demo-cohort admission with PTT and INR results, its gold call run by
the real tool layer, so the values are the record's.
"""

import pytest

from annotations import services
from tests.annotations.evidence_fixtures import ptt_session
from tests.e2e.review_helpers import login, open_editor, user_with_password

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_changing_a_gold_call_code_warns_that_the_answer_value_is_stale(page, live_server, demo_cohort, screenshot_dir):
    reviewer = user_with_password("dr_evidence", "reviewer")
    session, turn, value = ptt_session()
    services.assign(session=session, reviewer=reviewer, by=None)

    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    open_editor(page)
    arguments = page.input_value("#step-0-arguments")
    assert '"ptt"' in arguments
    page.fill("#step-0-arguments", arguments.replace('"ptt"', '"inr"'))
    page.click("#save-draft")
    page.wait_for_selector("#gate-warnings")
    warnings = page.inner_text("#gate-warnings")
    assert f"{value} sec is no longer supported by step 1 Observation.search, whose result changed" in warnings, (
        warnings
    )
    assert "PTT is no longer returned by step 1 Observation.search" in warnings, warnings
    page.screenshot(path=str(screenshot_dir / "evidence_gate_en.png"), full_page=True)

    # The same warning in the Chinese UI (the stored message is read back in the UI language).
    page.click("#lang-switch button[value='zh-hans']")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    open_editor(page)
    page.click("#save-draft")
    page.wait_for_selector("#gate-warnings")
    warnings = page.inner_text("#gate-warnings")
    assert f"第 1 步 Observation.search 的结果已改变，不再支持 {value} sec" in warnings, warnings
    page.screenshot(path=str(screenshot_dir / "evidence_gate_zh.png"), full_page=True)
