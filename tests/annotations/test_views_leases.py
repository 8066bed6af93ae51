"""Lease endpoints: take on opening the editor, heartbeat, release; someone else's live lease is shown."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from annotations import services
from annotations.models import Lease

pytestmark = pytest.mark.django_db


def _url(turn, name="lease"):
    return reverse(f"annotations:{name}", args=[turn.pk])


def test_take_renew_release(client, turn, reviewers):
    client.force_login(reviewers[0])
    response = client.post(_url(turn))
    assert response.status_code == 200 and 'data-state="mine"' in response.text
    assert 'hx-trigger="every 30s"' in response.text  # the heartbeat
    lease = Lease.objects.get(turn=turn)
    assert lease.holder == reviewers[0]
    first_expiry = lease.expires_at
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() + dt.timedelta(seconds=5))
    client.post(_url(turn))  # heartbeat
    lease.refresh_from_db()
    assert lease.expires_at >= first_expiry - dt.timedelta(seconds=1)
    response = client.post(_url(turn, "release_lease"))
    assert response.status_code == 200 and 'data-state="none"' in response.text and "hx-trigger" not in response.text
    assert not Lease.objects.exists()


def test_someone_elses_live_lease_is_shown_not_taken(client, turn, reviewers, adjudicator):
    held = services.acquire_lease(turn=turn, user=adjudicator)
    client.force_login(reviewers[0])
    response = client.post(_url(turn))
    assert response.status_code == 200
    until = timezone.localtime(held.expires_at).strftime("%H:%M")
    assert f"Being edited by adj until {until}" in response.text and 'data-state="other"' in response.text
    assert Lease.objects.get(turn=turn).holder == adjudicator
    # The review page says so on the editor's summary too.
    page = client.get(reverse("annotations:turn", args=[turn.pk]))
    assert f"being edited by adj until {until}" in page.text
    # Releasing someone else's lease is a no-op.
    client.post(_url(turn, "release_lease"))
    assert Lease.objects.get(turn=turn).holder == adjudicator
    # Once it lapses the heartbeat takes it over.
    Lease.objects.filter(turn=turn).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    response = client.post(_url(turn))
    assert 'data-state="mine"' in response.text and Lease.objects.get(turn=turn).holder == reviewers[0]


def test_a_save_that_closes_the_editor_releases_the_lease(client, turn, reviewers):
    client.force_login(reviewers[0])
    client.post(_url(turn))
    assert Lease.objects.filter(holder=reviewers[0]).exists()
    response = client.post(reverse("annotations:approve", args=[turn.pk]), {"base_version": 1})
    assert "Review submitted." in response.text
    assert not Lease.objects.exists()


def test_a_draft_save_keeps_the_editor_open_and_the_lease(client, turn, reviewers):
    client.force_login(reviewers[0])
    client.post(_url(turn))
    response = client.post(reverse("annotations:edit", args=[turn.pk]), {"base_version": 1, "answer_en": "Draft."})
    assert "Draft saved." in response.text and 'id="edit-panel" open' in response.text.replace("\n", " ")
    assert 'hx-trigger="load, every 30s"' in response.text
    assert Lease.objects.get(turn=turn).holder == reviewers[0]
