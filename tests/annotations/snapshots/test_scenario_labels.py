"""One name per scenario everywhere (issue 35, polish: the snapshot form said "Med Safety" where the review
screens said "Medication safety"). Cases: the admin's Create snapshot form, the reviewer's queue, the dashboard
and the API's choices, in English and Chinese, against the one source (scenarios.models.Scenario)."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse
from django.utils import translation

from annotations import services
from annotations.admin_snapshots import CreateSnapshotForm
from annotations.templatetags.review_i18n import scenario_label
from scenarios.models import Scenario
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db

EXPECTED_EN = {
    "diagnostic_workup": "Diagnostic work-up",
    "med_safety": "Medication safety",
    "treatment_response": "Treatment response",
    "discharge_planning": "Discharge planning",
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_screen_reads_the_same_labels(language):
    with translation.override(language):
        form = {value: str(label) for value, label in CreateSnapshotForm().fields["scenarios"].choices}
        screens = {s.value: scenario_label(s.value) for s in Scenario}
        assert form == screens == {s.value: str(s.label) for s in Scenario}
        if language == "en":
            assert form == EXPECTED_EN


def test_snapshot_form_and_queue_show_the_same_words(client):
    staff = make_user("root", "admin")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    session = complete_session(scenario="med_safety")
    services.assign(session=session, reviewer=staff, by=None)
    client.force_login(staff)
    form = html.unescape(client.get(reverse("admin:annotations_snapshot_create")).text)
    queue = html.unescape(client.get(reverse("annotations:queue")).text)
    assert "Medication safety" in form and "Medication safety" in queue
    assert not re.search(r"Med Safety|Diagnostic Workup", form + queue)
