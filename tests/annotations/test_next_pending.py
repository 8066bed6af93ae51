"""Where `a` (approve and move on) goes next (issue 35): the next pending turn after the current one in queue order —
the rest of its session first, then the next sessions — wrapping round; a skipped turn comes back only after the
rest of the queue. Cases from the issue's report: "after skipping one hard turn every later `a` returns to it"."""

import pytest

from annotations import selectors, services
from annotations.models import Decision
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue():
    reviewer = make_user("dr_next", "reviewer")
    sessions = sorted((complete_session() for _ in range(2)), key=lambda s: s.record_id)
    for session in sessions:
        services.assign(session=session, reviewer=reviewer, by=None)
    turns = [t for s in sessions for t in s.turns.order_by("index")]
    return reviewer, turns


def _approve(turn, reviewer):
    services.submit_review(turn=turn, reviewer=reviewer, decision=Decision.APPROVE, base_version=turn.version)


def test_after_a_skipped_turn_the_next_is_the_one_after_not_the_skipped_one(queue):
    reviewer, turns = queue
    # The reviewer skipped turn 0 (hard) and approved turn 1: next is turn 2 of the same session.
    _approve(turns[1], reviewer)
    assert selectors.next_pending(user=reviewer, after=turns[1].pk) == turns[2].pk
    _approve(turns[2], reviewer)
    _approve(turns[3], reviewer)
    # The session's last turn: on to the next session, still not back to the skipped turn.
    assert selectors.next_pending(user=reviewer, after=turns[3].pk) == turns[4].pk


def test_the_end_of_the_queue_wraps_round_to_what_was_skipped(queue):
    reviewer, turns = queue
    for turn in turns[1:]:
        _approve(turn, reviewer)
    assert selectors.next_pending(user=reviewer, after=turns[-1].pk) == turns[0].pk
    _approve(turns[0], reviewer)
    assert selectors.next_pending(user=reviewer, after=turns[0].pk) is None


def test_progress_counts_what_no_longer_waits_for_the_reviewer(queue):
    reviewer, turns = queue
    assert selectors.review_progress(user=reviewer) == {"done": 0, "total": 8}
    _approve(turns[1], reviewer)
    _approve(turns[5], reviewer)
    assert selectors.review_progress(user=reviewer) == {"done": 2, "total": 8}
    # Another reviewer's sessions and decisions do not move this reviewer's count.
    other = make_user("dr_other", "reviewer")
    services.assign(session=complete_session(), reviewer=other, by=None)
    assert selectors.review_progress(user=reviewer) == {"done": 2, "total": 8}
    assert selectors.review_progress(user=other) == {"done": 0, "total": 4}


def test_j_and_k_step_over_pending_turns_unless_finished_ones_are_asked_for(client, queue):
    reviewer, turns = queue
    _approve(turns[1], reviewer)
    client.force_login(reviewer)
    page = client.get(f"/review/turns/{turns[0].pk}/").content.decode()
    assert f'data-next="/review/turns/{turns[2].pk}/"' in page  # turn 1 (finished) passed over
    assert 'id="finished-toggle"' in page and "0 / 8" not in page and "1 / 8 done" in page
    page = client.get(f"/review/turns/{turns[0].pk}/?finished=1").content.decode()
    assert f'data-next="/review/turns/{turns[1].pk}/?finished=1"' in page
    page = client.get(f"/review/turns/{turns[2].pk}/").content.decode()
    assert f'data-prev="/review/turns/{turns[0].pk}/"' in page
