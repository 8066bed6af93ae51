"""The pages work under the Content-Security-Policy, in a browser context that enforces it (the other
e2e tests bypass it for their string waits): the API docs (Swagger UI, inline script with the nonce)
render their operations, htmx swaps the patient search and a step's raw JSON, and nothing is refused.
Waits use locators (string waits are evaluated as code, which the policy forbids)."""

import pytest
from playwright.sync_api import expect

from ehr.models import Admission, LabEvent
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def csp_page(browser):
    context = browser.new_context()  # without bypass_csp
    page = context.new_page()
    page.refused = []
    page.on("console", lambda m: page.refused.append(m.text) if "Content Security Policy" in m.text else None)
    yield page
    context.close()


def _log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "x")
    page.click("button[type=submit]")
    expect(page.locator("nav")).to_be_visible()


def test_api_docs_render_under_the_csp(csp_page, live_server):
    response = csp_page.goto(f"{live_server.url}/api/docs/")
    assert "script-src 'self' 'nonce-" in response.headers["content-security-policy"]
    expect(csp_page.locator(".opblock").first).to_be_visible()  # Swagger UI ran and loaded the schema
    assert csp_page.locator(".opblock").count() > 5
    assert csp_page.refused == []


def test_htmx_patient_search_under_the_csp(csp_page, live_server, demo_cohort):
    make_user("dr_csp", "reviewer")
    hadm_id = LabEvent.objects.exclude(hadm_id=None).values_list("hadm_id", flat=True).first()
    subject_id = Admission.objects.get(hadm_id=hadm_id).subject_id
    _log_in(csp_page, live_server, "dr_csp")
    csp_page.goto(f"{live_server.url}/ehr/patients/")
    csp_page.fill("input[name=q]", str(hadm_id))
    expect(csp_page.locator("#patient-table tbody tr")).to_have_count(1)
    expect(csp_page.locator("#patient-table tbody tr td").first).to_have_text(str(subject_id))
    assert f"q={hadm_id}" in csp_page.url  # hx-push-url: htmx did the swap
    assert csp_page.refused == []


def test_review_screen_htmx_under_the_csp(csp_page, live_server, demo_cohort):
    from annotations import services

    reviewer = make_user("dr_csp2", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=make_user("boss_csp", "admin"))
    turn = session.turns.get(index=0)
    _log_in(csp_page, live_server, "dr_csp2")
    csp_page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    expect(csp_page.locator("#review")).to_be_visible()
    raw = csp_page.locator("details.raw-json")
    if raw.count():
        raw.first.locator("summary").click()
        expect(raw.first.locator("pre")).not_to_have_text("…")  # htmx fetched the raw observation
    assert csp_page.refused == []
