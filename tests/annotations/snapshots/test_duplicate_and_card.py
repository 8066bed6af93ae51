"""Issue 32, item 4: an honest card (Gwet's AC1 beside κ and α, a sentence when κ is low but raw
agreement high) and no silent duplicate snapshot, in the command, the admin and the API.

Cases from the issue: the demo's card printed 96.4% raw agreement beside κ 0.000 (nearly every decision
"approve"); a snapshot whose content equalled the previous one got a new version without a word.
"""

from __future__ import annotations

import math
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations.agreement import cohens_kappa, gwet_ac1, percent_agreement
from annotations.models import Snapshot
from annotations.snapshots import card
from annotations.snapshots.duplicates import DuplicateSnapshot
from annotations.snapshots.services import create_snapshot
from tests.annotations.api.conftest import token_client
from tests.annotations.conftest import make_user

pytestmark = pytest.mark.django_db


def test_ac1_stays_near_raw_agreement_under_prevalence():
    # 39 turns both approve, one turn approve/reject: the demo's shape (97.5% raw agreement).
    a = ["approve"] * 40
    b = ["approve"] * 39 + ["reject"]
    assert percent_agreement(a, b) == 0.975
    assert cohens_kappa(a, b) == 0.0
    assert math.isclose(gwet_ac1(a, b), (0.975 - 2 * (79 / 80) * (1 / 80)) / (1 - 2 * (79 / 80) * (1 / 80)))
    assert gwet_ac1(a, b) > 0.97
    # Balanced labels: AC1 and κ agree closely; perfect agreement is 1 either way.
    assert gwet_ac1(["a", "b"] * 5, ["a", "b"] * 5) == 1.0
    assert math.isnan(gwet_ac1([], []))


def test_card_reports_ac1_beside_kappa(curated, people):
    from annotations.models import Review

    turn_pks = [t.pk for s in curated["approved"] for t in s.turns.all()]
    lines = "\n".join(card._agreement_lines(turn_pks))
    assert "| Cohen's κ | Gwet's AC1 |" in lines
    assert "| rev1 / rev2 | 8 | 100.0 | 1.000 | 1.000 |" in lines, lines
    assert "κ and α are low" not in lines  # everything agreed: nothing to explain
    # One disagreement in 8 turns: κ 0 (every other decision is "approve"), AC1 near the raw 87.5%.
    turn = curated["approved"][0].turns.get(index=0)
    Review.objects.filter(turn=turn, reviewer=people["rev2"]).update(decision="reject", reject_reason="other")
    lines = "\n".join(card._agreement_lines(turn_pks))
    assert "| rev1 / rev2 | 8 | 87.5 | 0.000 | 0.858 |" in lines, lines


def test_low_kappa_sentence_when_agreement_is_high():
    from annotations.agreement import PairStats, low_kappa_high_agreement

    assert low_kappa_high_agreement([PairStats("a", "b", 80, 0.975, 0.0, 0.974)])
    assert not low_kappa_high_agreement([PairStats("a", "b", 80, 0.8, 0.1, 0.7)])
    assert not low_kappa_high_agreement([PairStats("a", "b", 80, 0.975, 0.8, 0.97)])


def test_command_refuses_a_duplicate_unless_forced(curated):
    call_command("make_snapshot", "--quiet", stdout=StringIO())
    with pytest.raises(
        CommandError,
        match=r"has not changed since v1: its content checksum would equal v1's .*no snapshot was created \(--force",
    ):
        call_command("make_snapshot", "--quiet", stdout=StringIO())
    assert Snapshot.objects.count() == 1
    out = StringIO()
    call_command("make_snapshot", "--quiet", "--force", stdout=out)
    assert out.getvalue().splitlines()[0] == "v2"
    v1, v2 = Snapshot.objects.order_by("version")
    assert v1.content_sha256 == v2.content_sha256
    # Another selection is other content: no refusal.
    call_command("make_snapshot", "--quiet", "--language", "en", stdout=StringIO())
    assert Snapshot.objects.count() == 3


def test_service_refusal_names_the_latest_snapshot(curated, people):
    first = create_snapshot(user=people["boss"])
    with pytest.raises(DuplicateSnapshot) as refused:
        create_snapshot(user=people["boss"])
    assert refused.value.latest == first and refused.value.content_sha256 == first.content_sha256


def test_admin_refuses_a_duplicate_on_the_form_unless_forced(client, curated, django_capture_on_commit_callbacks):
    staff = make_user("root", "admin")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    url = reverse("admin:annotations_snapshot_create")
    body = {"language": "both", "ehr_provenance": "undeclared"}
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, body).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(url, body)
    assert again.status_code == 200 and "has not changed since v1" in again.content.decode()
    assert Snapshot.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        forced = client.post(url, {**body, "force": "on"})
    assert forced.status_code == 302 and Snapshot.objects.count() == 2


def test_api_answers_409_duplicate_snapshot_unless_forced(curated, people, django_capture_on_commit_callbacks):
    client = token_client(people["boss"])
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/api/snapshots/", {}, format="json").status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post("/api/snapshots/", {}, format="json")
    assert refused.status_code == 409, refused.json()
    error = refused.json()["error"]
    assert error["code"] == "duplicate_snapshot" and error["latest"] == "v1"
    assert error["content_sha256"] == Snapshot.objects.get().content_sha256
    with django_capture_on_commit_callbacks(execute=True):
        forced = client.post("/api/snapshots/", {"force": True}, format="json")
    assert forced.status_code == 201 and forced.json()["label"] == "v2"


def test_low_kappa_high_agreement_sentence_in_the_card():
    """The explanatory sentence, from skewed decisions (39 of 40 turns both approve)."""
    from collections import Counter

    decisions = {t: {"a": "approve", "b": "approve"} for t in range(39)} | {39: {"a": "approve", "b": "reject"}}
    text = "\n".join(card.agreement_text(reviewers=Counter(a=40, b=40), decisions=decisions, rubric={}))
    assert "| a / b | 40 | 97.5 | 0.000 | 0.974 |" in text, text
    assert "κ and α are low although the reviewers agree on almost every turn because 98.8% of all decisions" in text


def test_streamed_agreement_lines_equal_the_ones_from_every_review_held(curated, people, monkeypatch):
    """The card's agreement is counted from reviews streamed in chunks (bench/scale.py: holding every review, each
    with two full turn contents, cost 257 MB at 1,500 sessions). Same lines as counting them all held at once, the
    code before, on the fixture's set with a disagreement and a rubric item dropped (keep/drop), in chunks smaller
    than the set."""
    from collections import Counter

    from annotations import agreement
    from annotations.models import Review

    turn_pks = [t.pk for s in curated["approved"] for t in s.turns.all()]
    turn = curated["approved"][0].turns.get(index=0)
    Review.objects.filter(turn=turn, reviewer=people["rev2"]).update(decision="reject", reject_reason="other")
    review = Review.objects.get(turn=turn, reviewer=people["rev1"])
    review.proposed = {**review.base_content, "rubric": review.base_content["rubric"][1:]}
    review.save()

    held = list(
        Review.objects.filter(turn_id__in=turn_pks, submitted_at__isnull=False)
        .select_related("reviewer")
        .order_by("turn_id", "pk")
    )
    decisions, rubric = agreement.ratings_from_reviews(held)
    expected = card.agreement_text(
        reviewers=Counter(r.reviewer.get_username() for r in held), decisions=decisions, rubric=rubric
    )
    assert len(held) == 16 and any(v == {"rev1": "drop", "rev2": "keep"} for v in rubric.values())
    monkeypatch.setattr(card, "REVIEW_CHUNK", 3)
    assert card._agreement_lines(turn_pks) == expected
    assert card._agreement_lines([]) == ["No submitted reviews of these turns (nothing to measure agreement on)."]
