import pytest

from annotations import services
from tests.annotations.conftest import make_user
from tests.evaluation.conftest import make_sessions

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_evidence_search_filters_the_record_from_the_keyboard(page, live_server, demo_cohort, screenshot_dir):
    reviewer = make_user("dr_search", "reviewer")
    reviewer.set_password("pw-search-123456789")
    reviewer.save()
    session = make_sessions(n=1)[0]  # a generated session on a demo admission with a full record
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "dr_search")
    page.fill("input[name=password]", "pw-search-123456789")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    rows = page.locator("#evidence tbody tr")
    total = rows.count()
    assert page.locator("#evidence-labs td.muted").count() == 0, "the admission has labs before the current date"
    label = page.locator("#evidence-labs tbody tr td").first.text_content().strip()

    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "evidence-search"
    page.keyboard.type(label)
    visible = page.locator("#evidence tbody tr:not([hidden])")
    assert 0 < visible.count() < total
    assert all(label.lower() in text.lower() for text in visible.all_text_contents())
    page.screenshot(path=str(screenshot_dir / "review_evidence_search.png"), full_page=True)

    page.fill("#evidence-search", "zzz-no-such-thing")
    assert page.locator("#evidence tbody tr:not([hidden])").count() == 0
    assert page.locator("#evidence-no-match").is_visible()
    page.fill("#evidence-search", "")
    assert page.locator("#evidence tbody tr:not([hidden])").count() == total
