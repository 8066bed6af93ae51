"""Model constraints of the scenarios app (checked by the database, so they hold on every write path)."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from scenarios.models import GoldStep, RubricItem, Session, Turn
from tests.scenarios.factories import GenerationRunFactory, SessionFactory, TurnFactory, complete_session

pytestmark = pytest.mark.django_db


def _fails(**kwargs) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        SessionFactory(**kwargs)


@pytest.mark.parametrize("tier", [0, 4])
def test_tier_must_be_1_to_3(tier: int) -> None:
    _fails(tier=tier)


def test_scenario_and_source_must_be_known() -> None:
    _fails(scenario="oncology")
    _fails(source="scraped")


def test_record_id_and_session_id_are_unique() -> None:
    SessionFactory(record_id="a", session_id="s-a")
    _fails(record_id="a", session_id="s-b")
    _fails(record_id="b", session_id="s-a")


def test_run_index_is_unique_within_a_run_and_goes_with_run() -> None:
    run = GenerationRunFactory()
    SessionFactory(run=run, run_index=0)
    _fails(run=run, run_index=0)
    _fails(run=run, run_index=None)
    _fails(run=None, run_index=3)
    SessionFactory(run=GenerationRunFactory(), run_index=0)  # another run may reuse the index
    SessionFactory(), SessionFactory()  # several sessions without a run


def test_run_is_protected_while_it_has_sessions() -> None:
    run = GenerationRunFactory()
    SessionFactory(run=run, run_index=0)
    with pytest.raises(ProtectedError):
        run.delete()


def test_status_is_free_for_later_review_states() -> None:
    session = SessionFactory(status="in_review")
    session.full_clean()
    assert Session.objects.get(pk=session.pk).status == "in_review"


@pytest.mark.parametrize(
    "field,value",
    [("task_type", "XX"), ("subtype", "ZZ"), ("tool_source", "fax"), ("workup_mode", "random")],
)
def test_turn_enumerations_are_enforced(field: str, value: str) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        TurnFactory(**{field: value})


def test_turn_index_unique_per_session_and_defaults() -> None:
    turn = TurnFactory(index=0)
    assert (turn.status, turn.version, turn.subtype, turn.workup_mode) == ("draft", 1, None, None)
    with pytest.raises(IntegrityError), transaction.atomic():
        TurnFactory(session=turn.session, index=0)
    TurnFactory(session=turn.session, index=1)


def test_step_and_rubric_idx_unique_per_turn() -> None:
    turn = TurnFactory()
    GoldStep.objects.create(turn=turn, idx=0, tool="prepare_to_answer")
    with pytest.raises(IntegrityError), transaction.atomic():
        GoldStep.objects.create(turn=turn, idx=0, tool="prepare_to_answer")
    RubricItem.objects.create(turn=turn, idx=0, text_en="x")
    with pytest.raises(IntegrityError), transaction.atomic():
        RubricItem.objects.create(turn=turn, idx=0, text_en="y")


def test_rubric_check_is_validated_on_save_and_clean() -> None:
    turn = TurnFactory()
    with pytest.raises(ValueError, match="unknown kind"):
        RubricItem.objects.create(turn=turn, idx=0, text_en="x", machine_check={"kind": "vibes"})
    item = RubricItem(turn=turn, idx=0, text_en="x", machine_check={"kind": "term", "en": [], "zh": []})
    with pytest.raises(ValidationError) as exc:
        item.full_clean()
    assert "machine_check" in exc.value.message_dict
    assert not RubricItem.objects.exists()


def test_deleting_a_session_deletes_its_turns_steps_and_rubric() -> None:
    session = complete_session()
    assert Turn.objects.filter(session=session).count() == 4
    session.delete()
    assert not Turn.objects.exists() and not GoldStep.objects.exists() and not RubricItem.objects.exists()
