"""The authentication backend loads the signed-in user's roles with the user row (annotations.auth)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations.auth import RoleLoadingModelBackend
from annotations.roles import has_role, is_adjudicator, is_admin
from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


def test_roles_come_with_the_user_row_and_a_role_change_counts_at_the_next_request(client):
    user = make_user("carer", "reviewer")
    client.force_login(user)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("annotations:queue")).status_code == 200
    sqls = [q["sql"] for q in captured]
    assert not [sql for sql in sqls if sql.startswith('SELECT "auth_group"')], sqls  # no separate groups read
    (user_row,) = [sql for sql in sqls if sql.startswith('SELECT "auth_user"')]
    assert user_row.count("EXISTS") == 3
    assert client.get(reverse("api:snapshot-list")).status_code == 403
    user.groups.add(Group.objects.get_or_create(name="adjudicator")[0])
    assert client.get(reverse("api:snapshot-list")).status_code == 200
    user.groups.clear()
    assert client.get(reverse("annotations:queue")).status_code == 403  # no role left: refused at once


def test_get_user_keeps_model_backend_rules():
    backend = RoleLoadingModelBackend()
    admin = make_user("chief", "admin")
    loaded = backend.get_user(admin.pk)
    assert (is_admin(loaded), is_adjudicator(loaded), has_role(loaded)) == (True, True, True)
    plain = make_user("visitor", "nobody")  # a group that is no role
    assert has_role(backend.get_user(plain.pk)) is False
    plain.is_active = False
    plain.save(update_fields=["is_active"])
    assert backend.get_user(plain.pk) is None and backend.get_user(10**9) is None
