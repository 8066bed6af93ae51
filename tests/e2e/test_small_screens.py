"""Small screens (issue 35): at 390 px and 768 px the queue, the review screen, the dashboard and the results have
no sideways page scroll, and the header's language switch and log-out are reachable (inside the viewport)."""

import pytest

from annotations import services
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.mark.parametrize("width", [390, 768])
def test_no_sideways_scroll_and_header_reachable(page, live_server, screenshot_dir, width):
    reviewer = user_with_password(f"dr_small_{width}", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    page.set_viewport_size({"width": width, "height": 844})
    login(page, live_server, reviewer.username)
    turn = session.turns.get(index=0)
    for path in ("/review/", f"/review/turns/{turn.pk}/", "/review/dashboard/", "/results/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state()
        assert page.evaluate(SIDEWAYS) <= 0, f"{path} scrolls sideways at {width} px"
        for control in ("#lang-switch button.current", ".topbar .logout button"):
            box = page.locator(control).bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, f"{control} off-screen on {path}"
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.screenshot(path=str(screenshot_dir / f"review_{width}px.png"), full_page=True)
