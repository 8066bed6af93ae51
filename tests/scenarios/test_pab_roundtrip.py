"""Lossless interop: import → export → import → export is byte-identical and keeps every original field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.models import Session
from scenarios.pab import export_pab, import_pab_file, parse_record, session_to_record
from scenarios.pab.conversation import DEFAULT_SEPARATOR
from scenarios.pab.verbatim import same_json
from scenarios.selectors import sessions_for_export
from tests.scenarios.factories import complete_session
from tests.scenarios.pab_helpers import SAMPLE, sample_records

pytestmark = pytest.mark.django_db


def _export(tmp_path: Path, name: str, **filters) -> Path:
    out = tmp_path / name
    export_pab(out=out, **filters)
    return out


def _records(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_import_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    assert import_pab_file(path=SAMPLE).ok
    first = _export(tmp_path, "first.jsonl")

    assert import_pab_file(path=first, replace=True).ok
    second = _export(tmp_path, "second.jsonl")
    assert second.read_bytes() == first.read_bytes()

    Session.objects.all().delete()  # and into an empty database
    assert import_pab_file(path=second).ok
    assert _export(tmp_path, "third.jsonl").read_bytes() == first.read_bytes()


def test_every_original_field_survives(tmp_path: Path) -> None:
    import_pab_file(path=SAMPLE)
    exported = _records(_export(tmp_path, "out.jsonl"))

    for original in sample_records():
        out = exported[original["id"]]
        differing = [k for k, v in original.items() if k not in out or not same_json(v, out[k])]
        assert differing == [], original["id"]
        # what the export adds: the missing English aliases and our own block
        assert set(out) - set(original) <= {
            "messages_en",
            "tasks_en",
            "tasks_en_explicit",
            "tools_en",
            "task_sequence",
            "patient_agent_annotations",
            "physreview",
        }


def test_output_is_utf8_text_with_deterministic_key_order(tmp_path: Path) -> None:
    import_pab_file(path=SAMPLE)
    data = _export(tmp_path, "out.jsonl").read_bytes()

    text = data.decode("utf-8")
    assert "螺内酯" in text and "\\u" not in text
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == 4
    assert [json.loads(x)["id"] for x in lines[:3]] == sorted(r["id"] for r in sample_records())
    first = json.loads(lines[2])  # med_safety_0
    source = next(r for r in sample_records() if r["id"] == first["id"])
    # issue 33: the imported record's own field order and nested key order (unchanged values), ours last
    assert list(first) == [*[k for k in source if k != "physreview"], "physreview"]
    assert list(first["tools"][0]) == list(source["tools"][0])


def test_our_extra_structure_travels_in_the_physreview_field(tmp_path: Path) -> None:
    complete_session(record_id="gen_1")
    out = _records(_export(tmp_path, "gen.jsonl"))["gen_1"]

    assert out["physreview"]["turns"][2]["derivations"] == [
        {"inputs": {"age": 70}, "name": "cockcroft_gault", "result": 41.7}
    ]
    assert out["physreview"]["turns"][0]["rubric"][1] == {
        "check": {"en": ["ibuprofen", "NSAID"], "kind": "must_not_recommend", "zh": ["布洛芬"]},
        "is_safety": True,
        "safety_inferred": False,
    }
    assert out["task_types"] == ["Information Lookup", "Data Gathering", "Clinical Reasoning", "Write/Update"]
    assert out["messages"][2] == DEFAULT_SEPARATOR
    parse_record(out)  # our export is a valid PAB record

    Session.objects.all().delete()
    path = tmp_path / "gen.jsonl"
    assert import_pab_file(path=path).ok
    item = Session.objects.get(record_id="gen_1").turns.get(index=0).rubric_items.get(idx=1)
    assert (item.is_safety, item.safety_inferred, item.machine_check["kind"]) == (True, False, "must_not_recommend")
    assert _export(tmp_path, "gen2.jsonl").read_bytes() == path.read_bytes()


def _exported(record_id: str) -> dict:
    return session_to_record(sessions_for_export().get(record_id=record_id))


def test_irregular_conversation_is_kept_until_its_turn_is_edited() -> None:
    import_pab_file(path=SAMPLE)
    original = sample_records()[1]  # diagnostic_workup_3: system message in turn 0, trailing separator in ZH
    out = _exported("diagnostic_workup_3")
    assert out["messages"] == original["messages"]
    assert out["messages_zh"] == original["messages_zh"]

    turn0 = Session.objects.get(record_id="diagnostic_workup_3").turns.get(index=0)
    turn0.answer_en = "WBC 15.2 K/uL, high."
    turn0.save()
    out = _exported("diagnostic_workup_3")
    assert out["messages"][:2] == [
        {"role": "user", "content": "What is his white count this morning?"},
        {"role": "assistant", "content": "WBC 15.2 K/uL, high."},
    ]  # turn 0 rebuilt (the system message went with the edit) ...
    assert out["messages"][2:] == original["messages"][3:]  # ... the other turns are untouched
    assert "messages_en" not in out and "messages_en" not in original  # no field the import lacked (issue 33)
    assert out["messages_zh"] == original["messages_zh"]  # Chinese not edited: still verbatim

    turn2 = turn0.session.turns.get(index=2)
    turn2.answer_zh = "血培养：革兰阴性杆菌。"
    turn2.save()
    zh = _exported("diagnostic_workup_3")["messages_zh"]
    # [u0, a0, =, u1, a1, =, u2, a2, =, u3, a3, =]: turn 2 rebuilt, and the trailing separator is gone
    # because the whole-list copy no longer matches the turns
    edited = [
        {"role": "user", "content": "有培养结果了吗？"},
        {"role": "assistant", "content": "血培养：革兰阴性杆菌。"},
    ]
    assert zh == original["messages_zh"][:6] + edited + original["messages_zh"][8:-1]


def test_differing_alias_follows_its_primary_after_an_edit() -> None:
    import_pab_file(path=SAMPLE)
    original = sample_records()[2]  # discharge_planning_7: tasks_en and tools_en differ from tasks / tools
    out = _exported("discharge_planning_7")
    assert (out["tasks_en"], out["tools_en"]) == (original["tasks_en"], original["tools_en"])

    turn = Session.objects.get(record_id="discharge_planning_7").turns.get(index=3)
    turn.request_implicit_en = "Go ahead and order it."
    turn.save()
    out = _exported("discharge_planning_7")
    assert out["tasks_en"] == out["tasks"] and out["tasks"][3] == "Go ahead and order it."
    assert out["tools_en"] == original["tools_en"]  # tools unchanged: still verbatim


def test_generated_at_is_kept_as_written_until_changed() -> None:
    import_pab_file(path=SAMPLE)
    assert _exported("med_safety_0")["generated_at"] == "2026-05-02T09:14:03.512000"
    session = Session.objects.get(record_id="med_safety_0")
    assert session.generated_at.isoformat() == "2026-05-02T09:14:03.512000+00:00"
    session.generated_at = session.generated_at.replace(second=4)
    session.save()
    assert _exported("med_safety_0")["generated_at"] == "2026-05-02T09:14:04.512000+00:00"


def test_export_of_the_sample_matches_the_golden_file(tmp_path: Path) -> None:
    """Same bytes on SQLite and PostgreSQL (the suite runs on both). After an intended format change,
    regenerate: import_pab tests/scenarios/data/pab_sample.jsonl; export_pab --out <this file>."""
    import_pab_file(path=SAMPLE)
    golden = SAMPLE.with_name("pab_sample.export.jsonl")
    assert _export(tmp_path, "out.jsonl").read_bytes() == golden.read_bytes()
