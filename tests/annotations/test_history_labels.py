"""The history page's readable forms: revision kinds as labels, flags as yes/no, checks as sentences."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotations import services
from annotations.content import snapshot
from annotations.templatetags import history_labels as labels


def test_revision_kinds_read_as_labels():
    assert labels.revision_kind("review_edit") == "Edit"
    assert labels.revision_kind("conflict") == "Conflicting save"
    assert labels.revision_kind("unknown_kind") == "unknown_kind"


def test_fields_are_shown_by_their_kind_of_value():
    assert [labels.value_kind(f) for f in ("status", "rubric.3.is_safety", "rubric.0.machine_check", "answer_zh")] == [
        "status",
        "flag",
        "check",
        "text",
    ]
    assert (labels.yes_no(True), labels.yes_no(False), labels.yes_no(None)) == ("yes", "no", "—")


@pytest.mark.django_db
def test_history_page_shows_labels_not_codes(client, turn, admin_user):
    rubric = snapshot(turn=turn)["rubric"]
    was = bool(rubric[0]["is_safety"])
    rubric[0]["is_safety"] = not was
    rubric[0]["machine_check"] = {"kind": "value_unit", "value": 5, "unit": "mg"}
    services.save_turn_edit(turn=turn, user=admin_user, changes={"rubric": rubric}, base_version=1)
    client.force_login(admin_user)
    html = client.get(reverse("annotations:history", args=[turn.pk])).content.decode()
    flags = "yes → no" if was else "no → yes"
    assert f'<p class="flag-change">{flags}</p>' in html and "→ value 5 mg</p>" in html
    assert ">Edit</span>" in html and ">review_edit<" not in html
    assert "<del>false</del>" not in html and "<ins>true</ins>" not in html
