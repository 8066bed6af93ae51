import pytest

from ehr.models import Admission, LabEvent
from tests.annotations.conftest import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_log_in_browse_patients_open_an_admission(page, live_server, demo_cohort, screenshot_dir):
    user = make_user("dr_e2e", "reviewer")  # a user with no role sees no EHR pages (physreview.access)
    user.set_password("pw-e2e-123456")
    user.save()
    hadm_id = LabEvent.objects.exclude(hadm_id=None).values_list("hadm_id", flat=True).first()
    subject_id = Admission.objects.get(hadm_id=hadm_id).subject_id

    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", "dr_e2e")
    page.fill("input[name=password]", "pw-e2e-123456")
    page.click("button[type=submit]")
    # A reviewer starts on their review queue; the EHR browser is one link away.
    page.wait_for_selector("h1:has-text('My queue')")
    page.goto(f"{live_server.url}/ehr/patients/")
    page.wait_for_selector("h1:has-text('Patients')")

    # htmx search narrows the table without a page load.
    page.fill("input[name=q]", str(hadm_id))
    page.wait_for_function("document.querySelectorAll('#patient-table tbody tr').length === 1")
    assert page.inner_text("#patient-table tbody tr td") == str(subject_id)
    page.screenshot(path=str(screenshot_dir / "patient_list.png"), full_page=True)

    page.click(f"a[href='/ehr/admissions/{hadm_id}/']")
    page.wait_for_selector(f"h1:has-text('Admission {hadm_id}')")
    assert page.locator("svg.spark").count() > 0
    page.screenshot(path=str(screenshot_dir / "admission.png"), full_page=True)
