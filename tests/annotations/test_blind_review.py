"""Blind review: before the co-reviewer has submitted, no page or API route a reviewer can open shows the
co-reviewer's name, decision, reasons, proposed text or comments (annotations.blind is the one rule)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.urls import reverse
from django.utils import timezone

from annotations import blind, services, urls
from annotations.models import Comment, Lease
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db

PARTNER = "zz_hidden_partner"
SECRETS = (
    PARTNER,
    "HIDDEN-COMMENT rev2 thinks answer is WRONG",
    "HIDDEN-REASON partner explains the rejection",
    "HIDDEN-PROPOSAL partner answer text",
)


@pytest.fixture
def blind_setup(admin_user):
    """``me`` and PARTNER review one session; on turn 1 both submitted (an agreement pair exists); on
    turn 0 the partner has a draft rejection, a proposed edit, a comment and the live edit lease."""
    me, partner = make_user("blind_me", "reviewer"), make_user(PARTNER, "reviewer")
    session = complete_session()
    for reviewer in (me, partner):
        services.assign(session=session, reviewer=reviewer, by=admin_user)
    done = session.turns.get(index=1)
    for reviewer in (me, partner):
        services.submit_review(turn=done, reviewer=reviewer, decision="approve", base_version=done.version)
    turn = session.turns.get(index=0)
    services.save_draft_review(
        turn=turn,
        reviewer=partner,
        decision="reject",
        reject_reason="translation_error",
        reason=SECRETS[2],
        proposed={"answer_en": SECRETS[3]},
    )
    services.add_comment(turn=turn, author=partner, text=SECRETS[1])
    services.add_comment(turn=turn, author=me, text="my own note")
    now = timezone.now()
    Lease.objects.create(turn=turn, holder=partner, acquired_at=now, expires_at=now + dt.timedelta(minutes=2))
    return me, partner, turn


def _assert_blind(response, what: str) -> None:
    assert response.status_code < 500, what
    body = response.content.decode()
    for secret in SECRETS:
        assert secret not in body, f"{what} shows {secret!r}"


def test_reviewer_sees_nothing_of_the_co_reviewer_anywhere(client, blind_setup):
    me, _partner, turn = blind_setup
    client.force_login(me)
    pk, session_pk = turn.pk, turn.session_id
    gets = {
        "queue": reverse("annotations:queue"),
        "turn": reverse("annotations:turn", args=[pk]),
        "step_raw": reverse("annotations:step_raw", args=[pk]) + "?step=0",
        "history": reverse("annotations:history", args=[pk]),
        "dashboard": reverse("annotations:dashboard"),
        "adjudicate": reverse("annotations:adjudicate", args=[pk]),
        "done": reverse("annotations:done"),
    }
    posts = {
        "lease": (reverse("annotations:lease", args=[pk]), {}),
        "comment": (reverse("annotations:comment", args=[pk]), {"text": "another note of mine"}),
        "discard_draft": (reverse("annotations:discard_draft", args=[pk]), {}),  # no draft yet: nothing to do
        "edit": (reverse("annotations:edit", args=[pk]), {"base_version": turn.version, "answer_zh": "我的草稿"}),
        "merge": (reverse("annotations:merge", args=[pk]), {"base_version": turn.version}),
        "release_lease": (reverse("annotations:release_lease", args=[pk]), {}),
        "reject": (reverse("annotations:reject", args=[pk]), {"base_version": turn.version}),  # no reason: refused
        "undo": (reverse("annotations:undo", args=[pk]), {}),  # nothing submitted yet: refused
        "confirm": (reverse("annotations:confirm", args=[pk]), {"base_version": turn.version}),  # not an adjudicator
        "approve": (reverse("annotations:approve", args=[pk]), {"base_version": turn.version}),  # last: submits
    }
    # Every route of the review app is walked: a new one must be added here.
    names = {p.name for p in urls.urlpatterns}
    assert names == set(gets) | set(posts), names ^ (set(gets) | set(posts))
    for name, url in gets.items():
        _assert_blind(client.get(url), name)
    # The lease banner is shown (the partner holds it), without the partner's name.
    page = client.get(gets["turn"]).content.decode()
    assert "another reviewer" in page and "my own note" in page
    for name, (url, data) in posts.items():
        _assert_blind(client.post(url, data), name)
    api = [
        "/api/turns/",
        f"/api/turns/{pk}/",
        "/api/sessions/",
        f"/api/sessions/{session_pk}/",
    ]
    for url in api:
        response = client.get(url, HTTP_ACCEPT="application/json")
        assert response.status_code == 200, url
        _assert_blind(response, url)
    detail = json.loads(client.get(f"/api/turns/{pk}/").content)
    assert {r["reviewer"] for r in detail["reviews"]} == {me.username}


def test_once_both_are_in_the_reviewer_sees_the_partner(client, blind_setup):
    me, partner, turn = blind_setup
    services.submit_review(turn=turn, reviewer=me, decision="approve", base_version=turn.version)
    assert {c.author_id for c in blind.visible_comments(turn=turn, user=me)} == {me.pk}
    services.submit_review(turn=turn, reviewer=partner, decision="reject", reject_reason="unsafe", base_version=1)
    assert {c.author_id for c in blind.visible_comments(turn=turn, user=me)} == {me.pk, partner.pk}
    assert blind.user_label(turn=turn, viewer=me, other=partner) == PARTNER
    client.force_login(me)
    body = client.get(reverse("annotations:turn", args=[turn.pk])).content.decode()
    assert SECRETS[1] in body and PARTNER in body


def test_adjudicators_see_every_comment_and_name(blind_setup, adjudicator):
    me, partner, turn = blind_setup
    assert len(blind.visible_comments(turn=turn, user=adjudicator)) == Comment.objects.filter(turn=turn).count()
    assert blind.user_label(turn=turn, viewer=adjudicator, other=partner) == PARTNER
    assert blind.user_label(turn=turn, viewer=me, other=partner) == "another reviewer"


def test_dashboard_pairs_of_a_reviewer_are_unnamed(client, blind_setup, adjudicator):
    me, _partner, _turn = blind_setup
    client.force_login(me)
    body = client.get(reverse("annotations:dashboard")).content.decode()
    assert "another reviewer" in body and PARTNER not in body
    client.force_login(adjudicator)
    assert PARTNER in client.get(reverse("annotations:dashboard")).content.decode()
