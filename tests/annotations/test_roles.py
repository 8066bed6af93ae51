"""Roles are read once per request (one groups query), and a role change counts at the user's next request."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


def test_groups_read_once_per_request_and_role_changes_count_at_once(client):
    user = make_user("carer", "reviewer")
    client.force_login(user)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("annotations:queue")).status_code == 200
    groups_reads = [q["sql"] for q in captured if 'FROM "auth_group"' in q["sql"]]
    assert len(groups_reads) == 1, groups_reads
    assert client.get(reverse("api:snapshot-list")).status_code == 403
    user.groups.add(Group.objects.get_or_create(name="adjudicator")[0])
    assert client.get(reverse("api:snapshot-list")).status_code == 200
    user.groups.clear()
    assert client.get(reverse("annotations:queue")).status_code == 403  # no role left: refused at once
