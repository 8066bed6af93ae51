"""Migrations 0004 (answer = prepare_to_answer repair) and 0006 (approvals backfilled per version).

Cases: a generated-shaped turn whose English observation went stale after a review edit, an imported
turn whose Chinese steps did too (the defect issue 32 found in 6 of 20 demo sessions), and approved
turns from before approvals were tracked (they must stay in the curated set).
"""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from annotations.models import Revision, TurnApproval, TurnState
from annotations.snapshots.freeze import curated_sessions, normalize_filters
from scenarios.gold_answer import answer_mismatches
from scenarios.models import GoldStep, Turn
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db
repair = importlib.import_module("annotations.migrations.0004_repair_answer_prepare_to_answer")
backfill = importlib.import_module("annotations.migrations.0006_backfill_turn_approvals")


def test_repair_aligns_both_languages_records_revisions_and_is_idempotent():
    session = complete_session()
    stale_en = session.turns.get(index=1)
    GoldStep.objects.filter(turn=stale_en, tool="prepare_to_answer").update(observation="old summary")
    stale_zh = session.turns.get(index=2)
    zh_steps = [{"action": {"name": "prepare_to_answer", "arguments": {}}, "observation": "旧", "idx": 0}]
    Turn.objects.filter(pk=stale_zh.pk).update(extra={"pab_answer_list_zh": zh_steps})
    version = stale_en.version

    repair.repair(apps, None)

    for turn in Turn.objects.filter(session=session).prefetch_related("steps"):
        assert answer_mismatches(turn=turn) == [], turn.index
    en = Revision.objects.get(turn=stale_en)
    assert (en.field, en.before, en.after, en.kind, en.version) == (
        "steps.1.observation",
        "old summary",
        stale_en.answer_en,
        "system",
        version,
    )
    zh = Revision.objects.get(turn=stale_zh)
    assert (zh.field, zh.before, zh.after) == ("answer_list_zh.observation", "旧", stale_zh.answer_zh)
    assert Turn.objects.get(pk=stale_en.pk).version == version  # the reviewed content did not change
    repair.repair(apps, None)
    assert Revision.objects.count() == 2


def test_backfill_keeps_approved_sessions_curated():
    session = complete_session()
    Turn.objects.filter(session=session).update(status=TurnState.APPROVED)
    filters = normalize_filters(scenarios=None, tiers=None, languages=None)
    assert not curated_sessions(filters=filters).exists()  # approved, but no version approved
    backfill.backfill(apps, None)
    assert list(curated_sessions(filters=filters)) == [session]
    approval = TurnApproval.objects.filter(turn__session=session).first()
    assert approval.via == "migration" and approval.version == approval.turn.version and approval.content
