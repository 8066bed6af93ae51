"""The rules judge on compiled rubric items: which form it scores and says so, the same on DB rows and on
snapshot records (agreement: tests/evaluation/calibration/test_compiled_agreement.py)."""

from __future__ import annotations

import json

import pytest

from evaluation.dataset import EvalRubric, session_from_model, session_from_record
from evaluation.judges.rules import judge_item
from scenarios.models import RubricItem, Session
from scenarios.pab import dumps_record, session_to_record
from scenarios.rubric_compiler.services import compile_stored

VALUE = {"kind": "value_unit", "value": 0.9, "unit": "mg/dL", "tolerance": 0.05}


def _rubric(**kw) -> EvalRubric:
    base = {"idx": 0, "text_en": "Cites creatinine 0.9 mg/dL", "text_zh": "", "is_safety": False, "machine_check": None}
    return EvalRubric(**{**base, **kw})


def test_the_judge_scores_a_suggestion_and_says_it_is_compiled() -> None:
    item = _rubric(compiled_check=VALUE, compiled_rule="value_unit", compiled_state="suggested")
    passed = judge_item(item=item, answer="Creatinine 0.9 mg/dL.", writes=[])
    failed = judge_item(item=item, answer="Creatinine 0.8 mg/dL.", writes=[])
    assert passed.scored and passed.passed and passed.reason.startswith("compiled (value_unit): found 0.9")
    assert failed.scored and failed.passed is False and failed.reason.startswith("compiled (value_unit):")
    removed = judge_item(item=_rubric(compiled_check=VALUE, compiled_state="removed"), answer="0.9 mg/dL", writes=[])
    assert not removed.scored and removed.passed is None and "removed" in removed.reason
    stored = _rubric(machine_check={**VALUE, "value": 1.4}, compiled_check=VALUE, compiled_state="edited")
    verdict = judge_item(item=stored, answer="Creatinine 1.4 mg/dL.", writes=[])
    assert verdict.passed and not verdict.reason.startswith("compiled")  # the stored check wins
    assert not judge_item(item=_rubric(), answer="0.9 mg/dL", writes=[]).scored  # nothing: never auto-passed


def compile_all() -> None:
    RubricItem.objects.update(machine_check=None)
    compile_stored(items=RubricItem.objects.all())


@pytest.mark.django_db
def test_a_snapshot_record_carries_the_suggestion_so_it_scores_the_same() -> None:
    from tests.scenarios.factories import complete_session

    complete_session()
    compile_all()
    row = Session.objects.prefetch_related("turns__steps", "turns__rubric_items").get()
    from_model = session_from_model(row)
    from_record = session_from_record(json.loads(dumps_record(session_to_record(row))))
    assert from_model.turns == from_record.turns
    rubric = from_record.turns[0].rubric[0]
    assert rubric.compiled_state == "suggested" and rubric.scoring_check[1] == "compiled"
