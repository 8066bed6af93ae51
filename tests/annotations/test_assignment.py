import json
from collections import Counter

import pytest
from django.forms import MultiWidget
from django.urls import reverse

from annotations import services
from annotations.models import Assignment, TurnState
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session


def test_distribute_balances_reviewers_and_is_idempotent(reviewers, admin_user):
    sessions = [complete_session() for _ in range(6)]
    created = services.distribute(sessions=sessions, reviewers=reviewers, per_session=2, by=admin_user)
    assert len(created) == 12
    load = Counter(a.reviewer.username for a in Assignment.objects.all())
    assert load == {"rev1": 4, "rev2": 4, "rev3": 4}
    for s in sessions:
        assert s.assignments.count() == 2
        assert set(s.turns.values_list("status", flat=True)) == {TurnState.IN_REVIEW}
    assert services.distribute(sessions=sessions, reviewers=reviewers, per_session=2) == []
    assert Assignment.objects.count() == 12


def test_distribute_tops_up_and_accounts_for_existing_load(reviewers, admin_user):
    sessions = [complete_session() for _ in range(3)]
    services.assign(session=sessions[0], reviewer=reviewers[0], by=admin_user)
    services.distribute(sessions=sessions, reviewers=reviewers, per_session=2)
    assert all(s.assignments.count() == 2 for s in sessions)
    load = Counter(Assignment.objects.values_list("reviewer__username", flat=True))
    assert sorted(load.values()) == [2, 2, 2]


def test_distribute_needs_enough_reviewers(reviewers):
    with pytest.raises(ValueError, match="per_session=4"):
        services.distribute(sessions=[complete_session()], reviewers=reviewers, per_session=4)


def test_assign_is_idempotent(session, reviewers, admin_user):
    a = services.assign(session=session, reviewer=reviewers[0], by=admin_user)
    b = services.assign(session=session, reviewer=reviewers[0], by=None)
    assert a.pk == b.pk and b.assigned_by == admin_user


@pytest.fixture
def staff(admin_user):
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    return admin_user


def test_admin_action_assigns_two_reviewers_per_session(client, staff, reviewers):
    sessions = [complete_session() for _ in range(3)]
    client.force_login(staff)
    response = client.post(
        reverse("admin:scenarios_session_changelist"),
        {"action": "assign_reviewers_automatically", "_selected_action": [s.pk for s in sessions]},
        follow=True,
    )
    assert response.status_code == 200
    assert "6 assignments created. Sessions covered: 3; reviewers in the pool: 3." in response.content.decode()
    assert all(s.assignments.count() == 2 for s in sessions)
    assert sorted(Counter(Assignment.objects.values_list("reviewer__username", flat=True)).values()) == [2, 2, 2]
    assert set(Assignment.objects.values_list("assigned_by", flat=True)) == {staff.pk}


def test_admin_action_without_enough_reviewers_says_so(client, staff):
    session = complete_session()
    make_user("only", "reviewer")
    client.force_login(staff)
    response = client.post(
        reverse("admin:scenarios_session_changelist"),
        {"action": "assign_reviewers_automatically", "_selected_action": [session.pk]},
        follow=True,
    )
    assert "No reviewers assigned: per_session=2 needs between 1 and 1" in response.content.decode()
    assert not Assignment.objects.exists()


def _form_data(form) -> dict:
    """What a browser would post for ``form`` as rendered (split widgets as their parts, JSON as text)."""
    data = {}
    for name, field in form.fields.items():
        bound = form[name]
        value = bound.value()
        if value is None:
            continue
        if isinstance(field.widget, MultiWidget):
            for i, part in enumerate(field.widget.decompress(value)):
                data[f"{bound.html_name}_{i}"] = part
        elif isinstance(value, (dict, list)):
            data[bound.html_name] = json.dumps(value)
        else:
            data[bound.html_name] = value
    return data


def test_admin_manual_assignment_inline_and_assignment_admin(client, staff, reviewers):
    session = complete_session()
    client.force_login(staff)
    url = reverse("admin:scenarios_session_change", args=[session.pk])
    page = client.get(url)
    assert page.status_code == 200
    data = _form_data(page.context["adminform"].form)
    # Every inline as rendered (management forms included), plus one new assignment row.
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(_form_data(formset.management_form))
        for form in formset.forms:
            data.update(_form_data(form))
        if formset.model is Assignment:
            data[f"{formset.prefix}-0-reviewer"] = reviewers[1].pk
    response = client.post(url, data)
    assert response.status_code == 302, (response.context["adminform"].form.errors, response.context["errors"])
    assignment = Assignment.objects.get(session=session)
    assert assignment.reviewer == reviewers[1] and assignment.assigned_by == staff
    assert set(session.turns.values_list("status", flat=True)) == {TurnState.IN_REVIEW}
    # The Assignment admin adds through the same service; the reviewer list offers reviewers only.
    other = complete_session()
    add_url = reverse("admin:annotations_assignment_add")
    choices = client.get(add_url).context["adminform"].form.fields["reviewer"].queryset
    assert set(choices.values_list("username", flat=True)) == {"rev1", "rev2", "rev3"}
    response = client.post(add_url, {"session": other.pk, "reviewer": reviewers[2].pk})
    assert response.status_code == 302
    assert Assignment.objects.get(session=other).assigned_by == staff
    assert set(other.turns.values_list("status", flat=True)) == {TurnState.IN_REVIEW}
    # A duplicate is refused by the form, not by a database error.
    response = client.post(add_url, {"session": other.pk, "reviewer": reviewers[2].pk})
    assert response.status_code == 200 and Assignment.objects.filter(session=other).count() == 1
