"""Switch the UI to Simplified Chinese from the header: labels change, turn content stays in its own language."""

import pytest

from annotations import services
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CJK_FONT = "Noto Sans CJK SC"


def _lang(page) -> str:
    return page.get_attribute("html", "lang")


def test_switch_ui_to_chinese_and_back(page, live_server, screenshot_dir, demo_cohort):
    reviewer = make_user("dr_lang", "reviewer")
    reviewer.set_password("pw-lang-123456")
    reviewer.save()
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)

    page.goto(f"{live_server.url}/review/")
    page.fill("input[name=username]", "dr_lang")
    page.fill("input[name=password]", "pw-lang-123456")
    page.click("button[type=submit]")
    page.wait_for_selector("h1:has-text('My queue')")
    assert _lang(page) == "en"

    # The switch in the header posts the choice and comes back to the same page, now in Chinese.
    page.click("#lang-switch button[value='zh-hans']")
    page.wait_for_selector("h1:has-text('我的队列')")
    assert _lang(page) == "zh-hans"
    nav = page.inner_text(".topbar nav")
    assert all(label in nav for label in ("患者", "审核", "仪表板")) and "Patients" not in nav
    assert "退出登录" in page.inner_text(".topbar .logout")
    assert page.get_attribute("#lang-switch button.current", "value") == "zh-hans"
    assert page.locator("#lang-switch button").all_inner_texts() == ["English", "简体中文"]
    headers = page.locator("#review-queue thead th").all_inner_texts()
    assert headers == ["会话", "轮次", "场景", "层级", "类型", "状态"]
    assert page.locator("#review-queue tbody tr").count() == 4
    assert set(page.locator("#review-queue td[data-status]").all_inner_texts()) == {"审核中"}
    assert CJK_FONT in page.eval_on_selector("h1", "el => getComputedStyle(el).fontFamily")
    page.screenshot(path=str(screenshot_dir / "zh_queue.png"), full_page=True)

    page.click(".topbar nav a[href='/review/dashboard/']")
    page.wait_for_selector("h1:has-text('仪表板')")
    assert "我的轮次状态分布" in page.inner_text("main")
    status_headers = page.locator("#by-reviewer thead th").all_inner_texts()
    assert status_headers == ["审核人", "草稿", "审核中", "待裁定", "已通过", "已驳回", "合计"]
    page.screenshot(path=str(screenshot_dir / "zh_dashboard.png"), full_page=True)

    # The review screen: the UI is Chinese, the English request is still the English request.
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.wait_for_selector("#turn")
    assert _lang(page) == "zh-hans"
    turn_text = page.inner_text("#turn")
    assert turn.request_explicit_en in turn_text and turn.request_explicit_zh in turn_text
    zh_cell = page.locator("#turn [lang='zh']").first
    assert CJK_FONT in zh_cell.evaluate("el => getComputedStyle(el).fontFamily")
    page.screenshot(path=str(screenshot_dir / "zh_review.png"), full_page=True)

    # The record stays English (lang="en") in the Chinese UI.
    page.click(".topbar nav a[href='/ehr/patients/']")
    page.wait_for_selector("h1:has-text('患者')")
    assert page.locator("#patient-table tbody[lang='en']").count() == 1
    page.screenshot(path=str(screenshot_dir / "zh_patients.png"), full_page=True)

    # Back to English; the choice sticks across pages.
    page.click("#lang-switch button[value='en']")
    page.wait_for_selector("h1:has-text('Patients')")
    assert _lang(page) == "en"
    page.goto(f"{live_server.url}/review/")
    page.wait_for_selector("h1:has-text('My queue')")
    assert "Dashboard" in page.inner_text(".topbar nav")
