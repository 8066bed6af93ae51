"""Two real database connections save the same turn from the same base version (PostgreSQL only)."""

import threading

import pytest
from django.db import connection, connections

from annotations import services
from annotations.models import Revision, RevisionKind
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite locks the whole database and has no SELECT ... FOR UPDATE: row-lock races need PostgreSQL",
)
def test_two_concurrent_saves_one_wins_one_conflicts_nothing_lost():
    turn = complete_session().turns.get(index=0)
    users = [make_user("adj_a", "adjudicator"), make_user("adj_b", "adjudicator")]
    texts = {"adj_a": "最近一次肌酐（A）是多少？", "adj_b": "最近一次肌酐（B）是多少？"}
    barrier = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def save(user):
        try:
            barrier.wait(timeout=10)
            services.save_turn_edit(
                turn=turn, user=user, changes={"request_explicit_zh": texts[user.username]}, base_version=1
            )
            outcomes[user.username] = "saved"
        except services.Conflict as exc:
            outcomes[user.username] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=save, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    winners = [name for name, o in outcomes.items() if o == "saved"]
    losers = [name for name, o in outcomes.items() if isinstance(o, services.Conflict)]
    assert len(winners) == 1 and len(losers) == 1, outcomes
    turn.refresh_from_db()
    assert turn.version == 2 and turn.request_explicit_zh == texts[winners[0]]
    conflict = outcomes[losers[0]]
    assert conflict.current["request_explicit_zh"] == texts[winners[0]]
    assert conflict.mine["request_explicit_zh"] == texts[losers[0]]
    kept = {(r.author.username, r.kind, r.after) for r in Revision.objects.filter(field="request_explicit_zh")}
    assert kept == {
        (winners[0], RevisionKind.REVIEW_EDIT, texts[winners[0]]),
        (losers[0], RevisionKind.CONFLICT, texts[losers[0]]),
    }


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite locks the whole database and has no SELECT ... FOR UPDATE: row-lock races need PostgreSQL",
)
def test_two_last_reviews_submitted_at_once_still_finalise_the_turn():
    from annotations.models import TurnState

    session = complete_session()
    reviewers = [make_user("r_a", "reviewer"), make_user("r_b", "reviewer")]
    for reviewer in reviewers:
        services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def submit(user):
        try:
            barrier.wait(timeout=10)
            services.submit_review(turn=turn, reviewer=user, decision="approve", base_version=1)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit, args=(u,)) for u in reviewers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED
