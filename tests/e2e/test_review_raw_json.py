import pytest

from annotations import services
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_raw_json_loads_when_opened(page, live_server):
    reviewer = make_user("dr_raw", "reviewer")
    reviewer.set_password("pw-raw-123456789")
    reviewer.save()
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    step = turn.steps.get(idx=0)
    assert isinstance(step.observation, dict) and step.observation

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "dr_raw")
    page.fill("input[name=password]", "pw-raw-123456789")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    details = page.locator("details.raw-json").first
    assert details.locator("pre").text_content() == "…"  # not printed with the page
    details.locator("summary").click()
    first_key = next(iter(step.observation))
    page.wait_for_function(
        "key => document.querySelector('details.raw-json pre').textContent.includes(key)", arg=f'"{first_key}"'
    )
