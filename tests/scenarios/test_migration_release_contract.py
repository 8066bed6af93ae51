"""Migration 0002: stored gold calls and write-call checks move to the released contract; nothing is lost."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from scenarios.models import GoldStep, RubricItem
from tests.scenarios.factories import TurnFactory

pytestmark = pytest.mark.django_db
migration = importlib.import_module("scenarios.migrations.0002_release_tool_contract")


def _old_turn():
    turn = TurnFactory(index=3, task_type="WU", tool_source="write")
    GoldStep.objects.create(
        turn=turn,
        idx=0,
        tool="MedicationRequest.create",
        arguments={"patient": 1, "medication": "warfarin", "status": "on-hold", "intent": "order", "reason": "INR"},
        extra={"note": "kept"},
    )
    GoldStep.objects.create(
        turn=turn, idx=1, tool="Observation.search", arguments={"subject_id": 1, "code": "inr"}, observation={}
    )
    RubricItem.objects.create(
        turn=turn,
        idx=0,
        text_en="Sets status to on-hold",
        machine_check={"kind": "write_call", "tool": "MedicationRequest.create", "params": {"status": "on-hold"}},
    )
    RubricItem.objects.create(
        turn=turn,
        idx=1,
        text_en="Orders a BMP",
        machine_check={"kind": "write_call", "tool": "ServiceRequest.create", "params": {"code": "BMP"}},
    )
    return turn


def test_gold_calls_and_checks_are_rewritten_and_rerunning_is_a_no_op():
    turn = _old_turn()
    migration.forward(apps, None)
    write, lookup = GoldStep.objects.filter(turn=turn).order_by("idx")
    assert write.arguments == {"subject_id": 1, "medication": "warfarin", "dose": "hold", "indication": "INR"}
    assert write.extra == {"note": "kept", "legacy_arguments": {"intent": "order"}}
    assert lookup.arguments == {"subject_id": 1, "code": "inr"}
    hold, bmp = RubricItem.objects.filter(turn=turn).order_by("idx")
    assert hold.machine_check["params"] == {"dose": "hold"}
    assert bmp.machine_check["params"] == {"service_type": "BMP"}
    before = [(s.arguments, s.extra) for s in GoldStep.objects.order_by("idx")]
    checks = [r.machine_check for r in RubricItem.objects.order_by("idx")]
    migration.forward(apps, None)
    assert [(s.arguments, s.extra) for s in GoldStep.objects.order_by("idx")] == before
    assert [r.machine_check for r in RubricItem.objects.order_by("idx")] == checks


def test_a_check_on_a_parameter_the_contract_lacks_is_kept_as_legacy():
    turn = TurnFactory(index=3, task_type="WU", tool_source="write")
    item = RubricItem.objects.create(
        turn=turn,
        idx=0,
        text_en="Replaces the old order",
        machine_check={"kind": "write_call", "tool": "MedicationRequest.create", "params": {"replaces": "rx-1"}},
    )
    migration.forward(apps, None)
    item.refresh_from_db()
    assert item.machine_check == {
        "kind": "write_call",
        "tool": "MedicationRequest.create",
        "params": {},
        "legacy_params": {"replaces": "rx-1"},
    }
    item.full_clean()  # the kept shape is a valid check


def test_generated_sessions_get_the_contract_schemas_and_imported_ones_keep_theirs():
    from ehr.fhir.registry import tool_schemas

    old = [{"type": "function", "function": {"name": "Observation.search", "parameters": {"properties": {}}}}]
    generated = TurnFactory(session__source="generated", session__tools=old).session
    imported = TurnFactory(session__source="imported", session__tools=old).session
    migration.forward(apps, None)
    generated.refresh_from_db()
    imported.refresh_from_db()
    assert generated.tools == tool_schemas(language="en")
    assert generated.tools_zh == tool_schemas(language="zh")
    assert imported.tools == old
