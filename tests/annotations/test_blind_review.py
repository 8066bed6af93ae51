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


# A third reviewer (issue 36, F3): their submitted rejection of turn 0 stays as hidden as the partner's draft.
THIRD = "zz_hidden_third"
THIRD_SECRETS = (THIRD, "HIDDEN-THIRD-REASON submitted rejection", "HIDDEN-THIRD-PROPOSAL answer text")


@pytest.fixture(params=[2, 3], ids=["2-reviewers", "3-reviewers"])
def blind_setup(request, admin_user):
    """``me`` and PARTNER (and with 3 reviewers THIRD) review one session; on turn 1 all submitted (agreement
    pairs exist); on turn 0 the partner has a draft rejection, a proposed edit, a comment and the live edit
    lease, and THIRD has submitted a rejection with an edit."""
    me, partner = make_user("blind_me", "reviewer"), make_user(PARTNER, "reviewer")
    others = [partner] + ([make_user(THIRD, "reviewer")] if request.param == 3 else [])
    session = complete_session()
    for reviewer in (me, *others):
        services.assign(session=session, reviewer=reviewer, by=admin_user)
    done = session.turns.get(index=1)
    for reviewer in (me, *others):
        services.submit_review(turn=done, reviewer=reviewer, decision="approve", base_version=done.version)
    turn = session.turns.get(index=0)
    if request.param == 3:
        services.submit_review(
            turn=turn,
            reviewer=others[1],
            decision="reject",
            reject_reason="unsafe",
            reason=THIRD_SECRETS[1],
            proposed={"answer_en": THIRD_SECRETS[2]},
            base_version=turn.version,
        )
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
    for secret in (*SECRETS, *THIRD_SECRETS):
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


# --- issue 36 (F3, F8): with three reviewers, the dashboard's aggregates follow the same rule -----------------


@pytest.fixture
def three_reviewers(admin_user):
    """rev_a, rev_b and rev_c review one session; turn 1 is fully reviewed (every pair has a unit), on turn 0
    rev_a has submitted and the others not yet (issue 36's probe: the turn is blind to rev_a)."""
    names = ("tri_a", "tri_b", "tri_c")
    users = [make_user(name, "reviewer") for name in names]
    session = complete_session()
    for reviewer in users:
        services.assign(session=session, reviewer=reviewer, by=admin_user)
    done = session.turns.get(index=1)
    for reviewer in users:
        services.submit_review(turn=done, reviewer=reviewer, decision="approve", base_version=done.version)
    turn = session.turns.get(index=0)
    services.submit_review(turn=turn, reviewer=users[0], decision="approve", base_version=turn.version)
    return users, session


def _figures(client, user) -> str:
    """The numbers a reviewer's dashboard shows: the status table and the agreement section (units, pairs)."""
    client.force_login(user)
    body = client.get(reverse("annotations:dashboard")).content.decode()
    table = body.split('id="by-reviewer"', 1)[1].split("</table>", 1)[0]
    return table + body.split('id="agreement"', 1)[1].split("</section>", 1)[0]


def test_a_co_reviewers_rejection_does_not_move_my_dashboard_while_the_turn_is_blind(client, three_reviewers):
    """F3: reviewer 2 rejecting turn 0 (which reviewer 1 submitted) changed reviewer 1's pairwise agreement
    although reviewer 3 had not submitted: the turn is still blind to reviewer 1."""
    (a, b, c), session = three_reviewers
    turn = session.turns.get(index=0)
    before = _figures(client, a)
    services.submit_review(turn=turn, reviewer=b, decision="reject", reject_reason="unsafe", base_version=turn.version)
    assert blind.hidden_users(turn=turn, user=a) == {b.pk, c.pk}
    assert _figures(client, a) == before
    # Once reviewer 3 is in, the turn is revealed and its ratings count.
    services.submit_review(turn=turn, reviewer=c, decision="approve", base_version=turn.version)
    assert blind.hidden_users(turn=turn, user=a) == frozenset()
    assert _figures(client, a) != before


def test_my_dashboard_counts_do_not_move_when_a_co_reviewer_submits(client, three_reviewers):
    """F8: the decision and rubric-item counts grew by one turn and by its rubric size (+3) when a co-reviewer
    submitted a turn that reviewer 1 has not reviewed."""
    (a, b, c), session = three_reviewers
    turn = session.turns.get(index=2)
    before = _figures(client, a)
    for reviewer in (b, c):
        services.submit_review(turn=turn, reviewer=reviewer, decision="reject", reject_reason="unsafe", base_version=1)
        assert _figures(client, a) == before, reviewer.username
    # Reviewer 1's own submission counts at once (their own work), and reveals the turn.
    services.submit_review(turn=turn, reviewer=a, decision="approve", base_version=1)
    assert _figures(client, a) != before


def test_adjudicators_dashboard_counts_every_submitted_review(client, three_reviewers, adjudicator):
    """The blind rule is for reviewers: an adjudicator's figures move with every submission."""
    (_a, b, _c), session = three_reviewers
    turn = session.turns.get(index=2)
    before = _figures(client, adjudicator)
    services.submit_review(turn=turn, reviewer=b, decision="reject", reject_reason="unsafe", base_version=1)
    assert _figures(client, adjudicator) != before
