"""Issue 16's page bugs, in Chromium: the safety-failures drill-down (page and API), styled 404/403/500 pages
and a start page per role, the done list after `a` with Undo, physician wording (no raw statuses, JSON, field
keys or None/[]) on the review, history, queue, done and dashboard pages and the dataset card, and content a
physician would reject (English in a Chinese text, a lone "?", a machine string) flagged on a reviewer's draft."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import translation

from annotations import services
from annotations.content import snapshot
from annotations.models import Review, Snapshot, SnapshotStatus
from annotations.templatetags import history_labels
from evaluation.models import EvalRun, TurnResult
from scenarios.models import RubricItem
from tests.e2e.review_helpers import PASSWORD, login, open_editor, superuser_with_password, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
RAW = re.compile(
    r"\b(?:needs_adjudication|in_review|review_edit|rubric\.\d+\.\w+|steps\.\d+\.arguments)\b|\bNone\b|\[\]"
    r"|\b(?:true|false) → (?:true|false)\b|\{\"kind\""
)
CJK = re.compile(r"[\u4e00-\u9fff]")


def _raw(text: str) -> list[str]:
    return [m.group() for m in RAW.finditer(text)]


def _safety_failed(result: TurnResult) -> bool:
    return any(v.get("is_safety") and v.get("scored") and not v.get("passed") for v in result.verdicts or [])


def test_safety_failures_filter_on_page_and_api(page, live_server, demo_cohort, tmp_path, screenshot_dir):
    """Bug 6: the "Safety failures" drill-down answered 500, and the API HTML 500."""
    session = complete_session()
    # Every rubric item a safety item, so the heuristic's misses are safety failures.
    RubricItem.objects.filter(turn__session=session).update(is_safety=True)
    call_command("runeval", "--model", "rules:heuristic", "--sessions", "all", "--quiet", "--output", str(tmp_path))
    run = EvalRun.objects.latest("pk")
    expected = {r.pk for r in TurnResult.objects.filter(run=run) if _safety_failed(r)}
    assert expected, "the heuristic run should fail at least one safety item"
    user_with_password("safety_adj", "adjudicator")
    login(page, live_server, "safety_adj")

    page.goto(f"{live_server.url}/results/runs/{run.pk}/turns/")
    page.select_option("#turn-filters select[name=show]", "safety")
    with page.expect_response(lambda r: "show=safety" in r.url) as info:
        page.click("#turn-filters button[type=submit]")
    assert info.value.status == 200
    page.wait_for_selector("#turn-results")
    shown = {int(r.get_attribute("data-result")) for r in page.query_selector_all("#turn-results tr[data-result]")}
    assert shown == expected
    page.screenshot(path=str(screenshot_dir / "bugs_safety_filter.png"), full_page=True)

    api = page.request.get(f"{live_server.url}/api/runs/{run.pk}/turns/?show=safety")
    assert api.status == 200 and api.headers["content-type"].startswith("application/json")
    body = api.json()
    assert body["count"] == len(expected) and {r["id"] for r in body["results"]} <= expected
    bad = page.request.get(f"{live_server.url}/api/runs/{run.pk}/turns/?show=nonsense")
    assert bad.status == 400 and bad.headers["content-type"].startswith("application/json")


def test_error_pages_are_styled_with_navigation(page, live_server, screenshot_dir):
    """Bug 7a: bare unstyled 404/403 pages."""
    user_with_password("lost_rev", "reviewer")
    login(page, live_server, "lost_rev")
    response = page.goto(f"{live_server.url}/review/turns/999999/")
    assert response.status == 404
    assert "Page not found" in page.inner_text("h1")
    assert _app_css_applied(page)
    assert page.locator("header nav, nav").first.is_visible()
    page.screenshot(path=str(screenshot_dir / "bugs_404.png"), full_page=True)
    page.click(".error-links >> text=Go to your start page")
    page.wait_for_url(f"{live_server.url}/review/")

    get_user_model().objects.create_user(username="no_role_user", password=PASSWORD)
    page.context.clear_cookies()
    login(page, live_server, "no_role_user")
    assert page.locator("#no-role").count() == 1  # told they have no role, not sent to the EHR patient list
    response = page.goto(f"{live_server.url}/review/")
    assert response.status == 403
    assert "Not allowed" in page.inner_text("h1") and page.locator(".error-links a").count() == 2
    page.screenshot(path=str(screenshot_dir / "bugs_403.png"), full_page=True)


def test_server_error_page_is_styled_with_a_way_back(page, live_server, monkeypatch, screenshot_dir):
    """Bug 7b: a bare unstyled 500 page (handler500 renders it without a request context)."""

    def boom(user):
        raise RuntimeError("the database is gone")

    user_with_password("unlucky_rev", "reviewer")
    login(page, live_server, "unlucky_rev")  # lands on /review/ (the start page view is patched only below)
    monkeypatch.setattr("annotations.views.start.start_page_for", boom)
    response = page.goto(f"{live_server.url}/")
    assert response.status == 500
    assert "Server error" in page.inner_text("h1") and _app_css_applied(page)
    body = page.inner_text("body")
    assert "the database is gone" not in body and "Traceback" not in body
    page.screenshot(path=str(screenshot_dir / "bugs_500.png"), full_page=True)
    monkeypatch.undo()
    page.click(".error-links >> text=Go to your start page")
    page.wait_for_url(f"{live_server.url}/review/")


def _app_css_applied(page) -> bool:
    """The app's stylesheet is linked, loaded and has rules (the old error pages had none)."""
    return page.evaluate(
        """() => [...document.styleSheets].some(s => (s.href || '').includes('app.css') && s.cssRules.length > 0)"""
    )


@pytest.mark.parametrize(
    ("role", "landing", "marker"),
    [
        ("reviewer", "/review/", "#review-queue, h1:has-text('My queue')"),
        ("adjudicator", "/review/#adjudication-queue", "h1:has-text('My queue')"),
        ("admin", "/review/dashboard/", "#dashboard-figures"),
    ],
)
def test_login_lands_on_the_role_start_page(page, live_server, role, landing, marker):
    """Bug 7b: after login every user landed on the EHR patient list."""
    user_with_password(f"start_{role}", role)
    login(page, live_server, f"start_{role}")
    assert page.url == f"{live_server.url}{landing}"
    assert "/ehr/patients/" not in page.url
    page.wait_for_selector(marker)


def test_approve_moves_on_with_undo_and_lists_the_turn_as_done(page, live_server, screenshot_dir):
    """Bug 8: `a` approved with no undo and stayed; there was no done list."""
    me = user_with_password("done_rev", "reviewer")
    session = complete_session()
    for user in (me, user_with_password("done_rev_b", "reviewer")):
        services.assign(session=session, reviewer=user, by=None)
    first, second = session.turns.get(index=0), session.turns.get(index=1)
    login(page, live_server, me.username)
    page.goto(f"{live_server.url}/review/turns/{first.pk}/")
    page.wait_for_selector("#approve-btn")
    page.keyboard.press("a")
    page.wait_for_url(f"**/review/turns/{second.pk}/?undo={first.pk}")
    assert "Undo" in page.inner_text("#undo-banner") and page.locator("#approve-btn").count() == 1

    page.goto(f"{live_server.url}/review/")
    page.click("#done-link")
    page.wait_for_selector("#done-list")
    row = page.locator(f"#done-list tr[data-turn='{first.pk}']")
    assert "Approve" in row.inner_text() and "In review" in row.inner_text()
    assert page.locator(f"#done-list tr[data-turn='{second.pk}']").count() == 0
    assert _raw(page.inner_text("main") if page.locator("main").count() else page.inner_text("body")) == []
    page.screenshot(path=str(screenshot_dir / "bugs_done_list.png"), full_page=True)
    row.locator("a").click()
    page.wait_for_selector("#my-decision")
    assert page.locator("#approve-btn").count() == 0  # reopened read-only
    assert Review.objects.get(turn=first, reviewer=me).decision == "approve"


def test_history_reads_as_words_not_codes(page, live_server, screenshot_dir):
    """Bug 9 (history): raw revision kinds (review_edit), flags as JSON false → true, checks as JSON."""
    superuser_with_password("hist_root")
    turn = complete_session().turns.get(index=0)
    rubric = snapshot(turn=turn)["rubric"]
    was_safety = bool(rubric[0]["is_safety"])
    rubric[0]["is_safety"] = not was_safety
    rubric[0]["machine_check"] = {"kind": "value_unit", "value": 1.4, "unit": "mg/dL", "tolerance": 0.1}
    admin = get_user_model().objects.get(username="hist_root")
    services.save_turn_edit(
        turn=turn, user=admin, changes={"rubric": rubric, "answer_en": "Creatinine is 1.4 mg/dL."}, base_version=1
    )
    login(page, live_server, "hist_root")
    page.goto(f"{live_server.url}/review/history/{turn.pk}/")
    page.wait_for_selector(".history-field")
    text = page.inner_text("body")
    assert _raw(text) == [], _raw(text)
    assert page.inner_text(".history-field[data-field=answer_en] .tag") == "Edit"
    flag = page.inner_text(".history-field[data-field='rubric.0.is_safety'] .flag-change")
    assert flag == ("yes → no" if was_safety else "no → yes")
    check = page.inner_text(".history-field[data-field='rubric.0.machine_check'] .check-change")
    assert check.endswith("→ value 1.4 mg/dL ± 0.1") and "{" not in check
    assert "Rubric item 1: safety flag" in text
    page.screenshot(path=str(screenshot_dir / "bugs_history_words.png"), full_page=True)


def test_history_labels_in_chinese(page, live_server):
    """Bug 9 (history, Chinese UI): the kind and flag labels are translated (needs the zh catalogue entries)."""
    superuser_with_password("hist_zh_root")
    turn = complete_session().turns.get(index=0)
    rubric = snapshot(turn=turn)["rubric"]
    rubric[0]["is_safety"] = not rubric[0]["is_safety"]
    admin = get_user_model().objects.get(username="hist_zh_root")
    services.save_turn_edit(turn=turn, user=admin, changes={"rubric": rubric}, base_version=1)
    with translation.override("zh-hans"):
        kind, yes, no = (
            history_labels.revision_kind("review_edit"),
            history_labels.yes_no(True),
            history_labels.yes_no(False),
        )
    assert all(CJK.search(label) for label in (kind, yes, no)), (kind, yes, no)
    page.context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": live_server.url}])
    login(page, live_server, "hist_zh_root")
    page.goto(f"{live_server.url}/review/history/{turn.pk}/")
    field = page.locator(".history-field[data-field='rubric.0.is_safety']")
    assert field.locator(".tag").inner_text() == kind
    assert field.locator(".flag-change").inner_text() in (f"{yes} → {no}", f"{no} → {yes}")
    assert _raw(page.inner_text("body")) == []


def test_review_queue_and_dashboard_read_as_words(page, live_server, screenshot_dir):
    """Bug 9 (review, queue, dashboard): raw statuses, machine checks as JSON, None/[] on the screen."""
    me = user_with_password("words_rev", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=me, by=None)
    turn = session.turns.get(index=0)
    item = turn.rubric_items.order_by("idx").first()
    item.machine_check = {"kind": "term", "en": ["creatinine"], "zh": ["肌酐"]}
    item.save()
    login(page, live_server, me.username)
    for path in ("/review/", f"/review/turns/{turn.pk}/", "/review/dashboard/", "/review/done/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state()
        assert _raw(page.inner_text("body")) == [], (path, _raw(page.inner_text("body")))
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    cell = page.locator("#rubric .machine-check").first
    assert cell.inner_text().startswith("mentions any of “creatinine”, “肌酐”")
    assert not cell.locator("details code").is_visible()  # the JSON only on request
    page.screenshot(path=str(screenshot_dir / "bugs_review_words.png"), full_page=True)


def test_dataset_card_is_rendered_markdown(page, live_server, screenshot_dir):
    """Bug 9 (dataset card): the snapshot's card was shown as raw Markdown."""
    superuser_with_password("card_root")
    snap = Snapshot.objects.create(
        version=1,
        label="v1",
        status=SnapshotStatus.READY,
        card_markdown="# PhysAssistBench v1\n\n- **48** sessions\n- two languages\n\n<script>window.__x = 1</script>",
    )
    login(page, live_server, "card_root")
    page.goto(f"{live_server.url}/admin/annotations/snapshot/{snap.pk}/change/")
    page.wait_for_selector("#snapshot-card")
    assert page.inner_text("#snapshot-card h1") == "PhysAssistBench v1"
    assert page.locator("#snapshot-card li").count() == 2
    assert page.inner_text("#snapshot-card strong") == "48"
    assert "# PhysAssistBench" not in page.inner_text("#snapshot-card")
    assert page.evaluate("window.__x") is None  # the card's script is cleaned out
    page.screenshot(path=str(screenshot_dir / "bugs_dataset_card.png"), full_page=True)


def test_content_a_physician_would_reject_is_flagged_on_the_review_screen(page, live_server, demo_cohort):
    """Bug 10: a Chinese gold text with an English fragment, a lone '?' where a value belongs and a machine string
    as the answer passed every gate. The same content gates run on a reviewer's draft and say what they found."""
    me = user_with_password("gate_rev", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=me, by=None)
    turn = session.turns.get(index=0)
    login(page, live_server, me.username)
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    open_editor(page)
    answer_zh = page.input_value("#field-answer_zh") + "紧急程度：routine。剂量 ？"
    answer_en = (
        page.input_value("#field-answer_en") + " Done with ServiceRequest.create (simulated, id sim-sr-9efe3bfae057)."
    )
    page.fill("#field-answer_zh", answer_zh)
    page.fill("#field-answer_en", answer_en)
    page.click("#save-draft")
    page.wait_for_selector("#gate-warnings")
    warnings = page.inner_text("#gate-warnings")
    assert "English in the Chinese text: routine" in warnings, warnings
    assert "a lone '?' where a value should be" in warnings, warnings
    assert "ServiceRequest.create" in warnings and "a simulated resource id" in warnings, warnings
    draft = Review.objects.get(turn=turn, reviewer=me)  # warned, not refused: the draft keeps the text
    assert draft.submitted_at is None
    assert (draft.proposed["answer_zh"], draft.proposed["answer_en"]) == (answer_zh, answer_en)
