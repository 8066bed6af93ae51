"""The admin pages of sessions and turns render with their inlines."""

import pytest
from django.urls import reverse

from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def test_session_and_turn_pages(admin_client) -> None:
    session = complete_session(record_id="admin_1")
    turn = session.turns.get(index=2)

    page = admin_client.get(reverse("admin:scenarios_session_change", args=[session.pk]))
    assert page.status_code == 200
    assert "Creatinine?" in page.content.decode()  # turns inline

    page = admin_client.get(reverse("admin:scenarios_turn_change", args=[turn.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "prepare_to_answer" in text and "不建议使用非甾体抗炎药" in text  # steps and rubric inline

    for name in ("session", "turn", "generationrun"):
        assert admin_client.get(reverse(f"admin:scenarios_{name}_changelist")).status_code == 200


def test_admin_rejects_a_bad_rubric_check(admin_client) -> None:
    session = complete_session(record_id="admin_2")
    turn = session.turns.get(index=0)
    item = turn.rubric_items.get(idx=0)
    url = reverse("admin:scenarios_turn_change", args=[turn.pk])
    page = admin_client.get(url)
    form = page.context["adminform"].form
    data = {k: ("" if v is None else v) for k, v in form.initial.items() if k in form.fields}
    for formset in page.context["inline_admin_formsets"]:
        fs = formset.formset
        data.update({f"{fs.prefix}-{k}": v for k, v in fs.management_form.initial.items()})
        for i, f in enumerate(fs.forms):
            for name, field in f.fields.items():
                value = f.initial.get(name, field.initial)
                if hasattr(value, "pk"):
                    value = value.pk
                if name in ("arguments", "dependency_list", "observation", "machine_check"):
                    value = field.prepare_value(value)
                data[f"{fs.prefix}-{i}-{name}"] = "" if value is None else value
    data["derivations"] = "[]"
    data["gate_report"] = "{}"
    data["extra"] = "{}"
    data["rubric_items-0-machine_check"] = '{"kind": "term", "en": [], "zh": []}'
    for key in [k for k, v in data.items() if v is False]:
        del data[key]

    page = admin_client.post(url, data)

    assert page.status_code == 200  # form redisplayed with the error
    assert "at least one phrase" in page.content.decode()
    item.refresh_from_db()
    assert item.machine_check["kind"] == "value_unit"
