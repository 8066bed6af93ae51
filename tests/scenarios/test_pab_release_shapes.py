"""Record shapes of the official PhysAssistBench release (``pab-protocol.md``, "Record shapes seen in the
release"): ``messages_zh`` without separators, ``tools_zh``, ``answer_list_zh``, patient answers for every
health literacy, ids spelled ``22444183.0``, and unknown fields written back byte for byte."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from scenarios.models import GenerationRun, GoldStep, Session, Turn
from scenarios.pab import export_pab, import_pab_file, session_to_record
from scenarios.pab.conversation import DEFAULT_SEPARATOR
from scenarios.pab.layout import ANSWER_LIST_ZH, KNOWN_FIELDS
from scenarios.pab.reader import member_texts
from scenarios.selectors import session_tool_schemas, sessions_for_export, turn_gold_steps
from tests.scenarios.factories import complete_session
from tests.scenarios.pab_helpers import write_jsonl

pytestmark = pytest.mark.django_db

RELEASE = Path(__file__).parent / "data" / "pab_release_sample.jsonl"
SEPARATOR = "=" * 60  # the sample's, not our default
# The tool contract of pab-protocol.md: tool → (required, optional) parameters.
CONTRACT = {
    "Patient.read": ({"subject_id"}, set()),
    "Encounter.search": ({"subject_id"}, {"hadm_id"}),
    "Condition.search": ({"subject_id"}, {"hadm_id", "code", "clinical_status"}),
    "Observation.search": ({"subject_id"}, {"hadm_id", "category", "code", "date_from", "date_to", "_count"}),
    "MedicationRequest.search": ({"subject_id"}, {"hadm_id", "medication", "status"}),
    "MedicationAdministration.search": ({"subject_id"}, {"hadm_id", "medication"}),
    "DiagnosticReport.search": ({"subject_id"}, {"hadm_id", "report_type"}),
    "DocumentReference.search": ({"subject_id"}, {"hadm_id", "type_code", "keyword"}),
    "CarePlan.search": ({"subject_id"}, {"hadm_id", "category"}),
    "Procedure.search": ({"subject_id"}, {"hadm_id"}),
    "AllergyIntolerance.search": ({"subject_id"}, {"hadm_id"}),
    "patient.get_symptom_history": ({"subject_id", "session_id"}, {"query"}),
    "patient.get_medication_adherence": ({"subject_id", "session_id"}, {"drug"}),
    "patient.get_social_history": ({"subject_id", "session_id"}, set()),
    "patient.get_functional_status": ({"subject_id", "session_id"}, set()),
    "patient.get_pain_assessment": ({"subject_id", "session_id"}, set()),
    "MedicationRequest.create": (
        {"subject_id", "medication", "dose", "route", "frequency"},
        {"indication", "duration_days"},
    ),
    "ServiceRequest.create": ({"subject_id", "service_type", "priority"}, {"note", "target_date"}),
    "Flag.create": ({"subject_id", "category", "code", "detail"}, set()),
    "prepare_to_answer": (set(), {"answer_type"}),
}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _records() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, _lines(RELEASE))}


def _export(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    export_pab(out=out)
    return out


def _exported(record_id: str) -> dict[str, Any]:
    return session_to_record(sessions_for_export().get(record_id=record_id))


def test_the_sample_holds_every_field_and_the_released_tool_contract() -> None:
    for rec in _records().values():
        assert KNOWN_FIELDS - {"physreview"} <= set(rec), rec["id"]
        assert set(rec) - KNOWN_FIELDS, "an unknown field"
        for name in ("tools", "tools_en", "tools_zh"):
            schemas = {t["function"]["name"]: t["function"]["parameters"] for t in rec[name]}
            assert set(schemas) == set(CONTRACT)
            for tool, (required, optional) in CONTRACT.items():
                assert set(schemas[tool]["required"]) == required, (name, tool)
                assert set(schemas[tool]["properties"]) == required | optional, (name, tool)
        messages = [m for m in rec["messages"] if not isinstance(m, str)]
        for lang, steps_field in (("en", "answer_list"), ("zh", "answer_list_zh")):
            props = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in rec["tools"]}
            for i, steps in enumerate(rec[steps_field]):
                for step in steps:
                    tool, args = step["action"]["name"], step["action"]["arguments"]
                    required, optional = CONTRACT[tool]
                    assert required <= set(args) <= required | optional, (steps_field, i, tool)
                    for key, value in args.items():
                        assert value in props[tool][key].get("enum", [value]), (tool, key, value)
                    if tool.startswith("patient."):
                        assert args["session_id"] == rec["session_id"]
                        assert set(step["observation"]) == {"patient_response", "patient_responses_all_literacy"}
                        assert set(step["observation"]["patient_responses_all_literacy"]) == {"low", "medium", "high"}
                last = steps[-1]
                assert last["action"] == {"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}}
                conversation = messages if lang == "en" else rec["messages_zh"]
                assert last["observation"] == conversation[2 * i + 1]["content"]
        assert len(rec["messages_zh"]) == 8 and not any(isinstance(m, str) for m in rec["messages_zh"])
    assert '"subject_id": 10011938.0, "hadm_id": 22444183.0' in RELEASE.read_text(encoding="utf-8")


def test_release_sample_is_imported() -> None:
    call_command("import_pab", str(RELEASE), "--quiet")

    assert Session.objects.count() == 2 and Turn.objects.count() == 8
    s = Session.objects.get(record_id="med_safety_0")
    assert (s.subject_id, s.hadm_id, s.tier, s.sequence_idx) == (10011938, 22444183, 2, 1)
    assert all(type(v) is int for v in (s.subject_id, s.hadm_id, s.tier, s.sequence_idx))
    assert len(s.tools) == len(s.tools_zh) == 20
    assert s.extra["release_meta"]["note"] == "已核对 ✓ 剂量" and s.extra["quality_score"] == 0.95

    turns = list(s.turns.order_by("index"))
    assert turns[1].answer_zh.startswith("螺内酯 25 mg 口服每日一次")  # from messages_zh without separators
    assert turns[3].answer_en == "Spironolactone is held (order created, simulated)."
    assert all("pab_messages" not in t.extra for t in turns)  # each pair is exactly the rebuild
    original = _records()["med_safety_0"]
    assert [t.extra[ANSWER_LIST_ZH] for t in turns] == original["answer_list_zh"]
    patient = turns[1].steps.get(idx=1)
    assert patient.tool == "patient.get_medication_adherence"
    assert patient.observation == original["answer_list"][1][1]["observation"]  # untouched, all literacies
    assert patient.observation["patient_responses_all_literacy"]["low"].startswith("I take the water pill")


def test_export_writes_the_record_back_byte_for_byte(tmp_path: Path) -> None:
    """The sample is in the export's layout, so each record comes back as it was, ``physreview`` appended."""
    import_pab_file(path=RELEASE)
    out = _lines(_export(tmp_path, "out.jsonl"))

    for line, original in zip(out, _lines(RELEASE), strict=True):
        assert line.startswith(original[:-1] + ', "physreview": '), original[:40]
        ours, theirs = member_texts(line), member_texts(original)
        for name in set(theirs) - KNOWN_FIELDS:
            assert ours[name] == theirs[name]  # unknown fields: key order, spacing, escapes, 1.50 ...
    assert '"quality_score": 0.950' in out[1] and '"weights":[1.50, 2.0E0, -0.0, 1e-7]' in out[1]


def test_reimport_of_the_export_and_its_export_are_byte_identical(tmp_path: Path) -> None:
    import_pab_file(path=RELEASE)
    first = _export(tmp_path, "first.jsonl")

    assert import_pab_file(path=first, replace=True).ok
    assert _export(tmp_path, "second.jsonl").read_bytes() == first.read_bytes()
    Session.objects.all().delete()
    assert import_pab_file(path=first).ok
    assert _export(tmp_path, "third.jsonl").read_bytes() == first.read_bytes()


def test_an_edited_conversation_is_exported_with_separators() -> None:
    import_pab_file(path=RELEASE)
    original = _records()["diagnostic_workup_3"]
    assert _exported("diagnostic_workup_3")["messages_zh"] == original["messages_zh"]

    turn = Session.objects.get(record_id="diagnostic_workup_3").turns.get(index=2)
    turn.answer_zh = "可以使用头孢曲松。"
    turn.save()
    out = _exported("diagnostic_workup_3")
    pairs = copy.deepcopy(original["messages_zh"])
    pairs[5]["content"] = "可以使用头孢曲松。"
    assert out["messages_zh"] == [*pairs[0:2], SEPARATOR, *pairs[2:4], SEPARATOR, *pairs[4:6], SEPARATOR, *pairs[6:]]
    assert out["messages"] == original["messages"]  # English not edited
    assert out["answer_list_zh"] == original["answer_list_zh"]


def test_pairs_that_differ_from_the_turns_are_written_back_as_imported(tmp_path: Path) -> None:
    rec = _records()["med_safety_0"]
    rec["messages_zh"][2] = {"role": "user", "content": "螺内酯呢？", "name": "physician"}  # not tasks_zh[1]
    rec["messages_zh"][7]["reasoning"] = None
    rec["messages"] = [m for m in rec["messages"] if not isinstance(m, str)]  # English without separators too
    rec.pop("messages_en")
    path = write_jsonl(tmp_path / "pairs.jsonl", [rec])
    assert import_pab_file(path=path).ok

    out = _exported("med_safety_0")
    assert (out["messages"], out["messages_zh"]) == (rec["messages"], rec["messages_zh"])
    assert "messages_en" not in out  # the record had none; an export adds no field of its own (issue 33)
    turn = Session.objects.get(record_id="med_safety_0").turns.get(index=1)
    assert turn.request_implicit_zh == "那螺内酯呢？" and "zh" in turn.extra["pab_messages"]
    turn.answer_en = "Spironolactone 25 mg daily."
    turn.save()
    out = _exported("med_safety_0")
    assert out["messages"][2] == DEFAULT_SEPARATOR  # the record had no separator of its own
    assert out["messages_zh"] == rec["messages_zh"]  # Chinese unchanged


def test_generated_session_exports_messages_zh_with_separators() -> None:
    complete_session(record_id="gen_1")
    out = _exported("gen_1")
    assert out["messages_zh"][2] == DEFAULT_SEPARATOR and "answer_list_zh" not in out


def test_spelled_values_follow_edits() -> None:
    import_pab_file(path=RELEASE)
    s = Session.objects.get(record_id="med_safety_0")
    s.subject_id = 10011939
    s.extra["release_meta"]["split"] = "dev"
    s.save()

    out = _exported("med_safety_0")
    assert (out["subject_id"], out["hadm_id"]) == (10011939, 22444183.0)  # the edited id is ours, the other kept
    assert json.dumps(out["hadm_id"]) == "22444183.0"
    assert out["release_meta"]["split"] == "dev" and not hasattr(out["release_meta"], "json_text")
    assert out["quality_score"].json_text == "0.950"


def test_tool_schemas_for_a_language() -> None:
    import_pab_file(path=RELEASE)
    s = Session.objects.get(record_id="med_safety_0")
    assert session_tool_schemas(session=s, language="zh") == s.tools_zh
    assert session_tool_schemas(session=s, language="zh")[0]["function"]["description"].startswith("读取")
    assert session_tool_schemas(session=s, language="en") == s.tools
    s.tools_zh = None
    assert session_tool_schemas(session=s, language="zh") == s.tools
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        session_tool_schemas(session=s, language="fr")


def test_gold_steps_for_a_language() -> None:
    import_pab_file(path=RELEASE)
    turn = Session.objects.get(record_id="diagnostic_workup_3").turns.get(index=0)

    zh = turn_gold_steps(turn=turn, language="zh")
    assert [(g.idx, g.tool) for g in zh] == [(0, "patient.get_symptom_history"), (1, "prepare_to_answer")]
    assert zh[0].arguments["query"] == "发热" and zh[0].observation["patient_response"].startswith("周日晚上")
    assert all(isinstance(g, GoldStep) and g.pk is None for g in zh)
    en = turn_gold_steps(turn=turn, language="en")
    assert [g.pk for g in en] == list(turn.steps.order_by("idx").values_list("pk", flat=True))
    assert en[0].arguments["query"] == "fever"

    generated = complete_session(record_id="gen_1").turns.get(index=0)
    assert [g.pk for g in turn_gold_steps(turn=generated, language="zh")] == [
        g.pk for g in turn_gold_steps(turn=generated, language="en")
    ]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(rec: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        obj: Any = rec
        for key in parents:
            obj = obj[int(key)] if isinstance(obj, list) else obj[key]
        obj[int(last) if isinstance(obj, list) else last] = value

    return mutate


def _swap_roles(rec: dict[str, Any]) -> None:
    zh = rec["messages_zh"]
    zh[4], zh[5] = zh[5], zh[4]


MALFORMED: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("fractional subject_id", _set("subject_id", 10011938.5), "field 'subject_id': expected integer, got 10011938.5"),
    ("fractional hadm_id", _set("hadm_id", 22444183.25), "field 'hadm_id': expected integer, got 22444183.25"),
    ("fractional tier", _set("difficulty_level", 2.5), "field 'difficulty_level': expected integer, got 2.5"),
    ("integral tier", _set("difficulty_level", 4.0), "field 'difficulty_level': 4 is not a tier"),
    ("fractional sequence_idx", _set("sequence_idx", 0.5), "field 'sequence_idx': expected integer, got 0.5"),
    ("fractional step idx", _set("answer_list.1.0.idx", 0.5), "field 'answer_list[1][0].idx': expected integer"),
    ("fractional zh step idx", _set("answer_list_zh.2.1.idx", 1.5), "field 'answer_list_zh[2][1].idx': expected"),
    (
        "odd messages_zh",
        lambda r: r["messages_zh"].pop(),
        "field 'messages_zh': 7 entries and no turn separator: expected 8",
    ),
    ("messages_zh roles", _swap_roles, "field 'messages_zh[4]': role 'assistant', expected 'user'"),
    (
        "system message without separators",
        _set("messages_zh.0", {"role": "system", "content": "你是助手"}),
        "field 'messages_zh[0]': role 'system', expected 'user'",
    ),
    (
        "answer_list_zh turns",
        lambda r: r["answer_list_zh"].pop(),
        "field 'answer_list_zh': 3 entries, but 'tasks' has 4",
    ),
    (
        "answer_list_zh last step",
        lambda r: r["answer_list_zh"][0].pop(),
        "field 'answer_list_zh[0][0].action.name': last step is 'Observation.search'",
    ),
    ("tools_zh entry", _set("tools_zh.3", "Observation.search"), "field 'tools_zh[3]': expected object, got string"),
]


@pytest.mark.parametrize("mutate,message", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_bad_release_record_names_file_line_field_and_loads_nothing(tmp_path: Path, mutate, message: str) -> None:
    good, bad = _records()["diagnostic_workup_3"], _records()["med_safety_0"]
    mutate(bad)
    path = write_jsonl(tmp_path / "bad.jsonl", [good, bad])

    errors = import_pab_file(path=path).errors

    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}:2: {message}"), errors[0]
    assert not Session.objects.exists() and not Turn.objects.exists() and not GenerationRun.objects.exists()


def test_member_texts_are_the_values_as_written() -> None:
    text = ' {"a" : {"}": "{", "b":[1.50]} ,"q\\"k":  "\\u5242" ,"n":null, "a": [ 1 ]}'
    assert member_texts(text) == {"a": "[ 1 ]", 'q"k': '"\\u5242"', "n": "null"}  # last "a" wins, like json
    assert member_texts("{}") == {} and member_texts("[1]") == {}
