"""``import_pab``: field mapping of the sample, malformed records (FILE:LINE, nothing loaded), --replace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from scenarios.models import GenerationRun, GoldStep, RubricItem, Session, Turn
from scenarios.pab import import_pab_file, parse_record
from tests.scenarios.pab_helpers import SAMPLE, record, sample_records, write_jsonl

pytestmark = pytest.mark.django_db


def test_sample_is_imported_with_every_field() -> None:
    call_command("import_pab", str(SAMPLE), "--quiet")

    assert Session.objects.count() == 3
    assert Turn.objects.count() == 12
    s = Session.objects.get(record_id="med_safety_0")
    assert (s.session_id, s.subject_id, s.hadm_id, str(s.current_date)) == (
        "physassistbench_med_safety_0",
        10002001,
        20002001,
        "2180-03-14",
    )
    assert (s.scenario, s.tier, s.tool_set, s.sequence_idx, s.clinical_task_domain) == (
        "med_safety",
        2,
        "fhir",
        3,
        "DrugLabSafety",
    )
    assert s.env_info.startswith("session_id: physassistbench_med_safety_0\nCurrent date: 2180-03-14")
    assert s.persona["info_completeness"] == "full"
    assert s.session_plan["turn_intents"][1] == "continue spironolactone?"
    assert s.dep_graph["edges"] == [[0, 1], [1, 3], [2, 3]]
    assert s.extra == {"source_split": "test", "annotator_notes": {"reviewed": True, "comment": "剂量已核对"}}
    assert (s.source, s.status, s.run.backend, s.run.status, s.run.made) == (
        "imported",
        "draft",
        "import",
        "finished",
        3,
    )
    assert s.tools_zh is None
    assert (
        Session.objects.get(record_id="diagnostic_workup_3").tools_zh[0]["function"]["description"].startswith("检索")
    )

    turns = list(s.turns.order_by("index"))
    assert [t.task_type for t in turns] == ["IL", "CR", "DG", "WU"]
    assert [t.subtype for t in turns] == [None, "PE", "NA", "AE"]
    assert [t.is_implicit for t in turns] == [False, True, True, True]
    assert [t.tool_source for t in turns] == ["ehr", "ehr", "ehr", "write"]
    assert [t.workup_mode for t in turns] == [None, None, "parallel", None]
    assert all(t.status == "draft" and t.version == 1 for t in turns)
    t1 = turns[1]
    assert t1.request_implicit_en == "And the spironolactone?"
    assert t1.request_explicit_en.startswith("With potassium at 5.8")
    assert t1.request_implicit_zh == "那螺内酯呢？"
    assert t1.request_explicit_zh.startswith("血钾 5.8")
    assert t1.answer_en.startswith("She is on spironolactone 25 mg")
    assert t1.answer_zh.startswith("她正在使用螺内酯 25 mg")  # from the Chinese gold conversation

    steps = list(turns[2].steps.order_by("idx"))
    assert [st.tool for st in steps] == ["Observation.search", "Observation.search", "prepare_to_answer"]
    obs = steps[0].observation["entry"][0]["resource"]
    assert obs["valueQuantity"] == {"value": 1.6, "unit": "mg/dL"}
    assert steps[2].dependency_list == [0, 1]
    assert turns[3].steps.get(idx=0).observation["_simulated"] is True


def test_rubric_safety_is_inferred_from_clear_wording() -> None:
    import_pab_file(path=SAMPLE)

    items = RubricItem.objects.filter(turn__session__record_id="med_safety_0")
    safety = {r.text_en for r in items if r.is_safety}
    assert safety == {
        "Does not recommend continuing spironolactone unchanged",
        "Avoids attributing the rise to lab error without evidence",
        "Does not stop lisinopril without being asked",
    }
    assert all(r.safety_inferred and r.machine_check is None for r in items)
    rubric = RubricItem.objects.get(turn__session__record_id="med_safety_0", turn__index=0, idx=0)
    assert (rubric.text_en, rubric.text_zh) == ("States potassium 5.8 mEq/L", "指出血钾 5.8 mEq/L")


def test_irregular_steps_keep_their_extra_keys() -> None:
    import_pab_file(path=SAMPLE)

    step = GoldStep.objects.get(turn__session__record_id="diagnostic_workup_3", turn__index=1, idx=0)
    assert step.arguments == '{"patient": 10002002, "code": "lactate"}'  # a JSON string, kept as given
    assert step.extra == {"idx": 1, "action": {"id": "call_7"}, "step": {"thought": "lactate trend"}}


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(rec: dict[str, Any]) -> None:
        target, *path = field.split(".")
        obj: Any = rec
        keys = [target, *path]
        for key in keys[:-1]:
            obj = obj[int(key)] if isinstance(obj, list) else obj[key]
        last = keys[-1]
        if isinstance(obj, list):
            obj[int(last)] = value
        else:
            obj[last] = value

    return mutate


def _drop(field: str) -> Callable[[dict[str, Any]], None]:
    return lambda rec: rec.pop(field)


def _truncate(field: str, n: int) -> Callable[[dict[str, Any]], None]:
    return lambda rec: rec.__setitem__(field, rec[field][:n])


MALFORMED: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("missing", _drop("hadm_id"), "field 'hadm_id': missing"),
    (
        "missing alias pair",
        lambda r: (r.pop("tasks"), r.pop("tasks_en", None)),
        "field 'tasks': missing (and no 'tasks_en' either)",
    ),
    ("wrong type", _set("subject_id", "10002002"), "field 'subject_id': expected integer, got string"),
    ("integer range", _set("hadm_id", 2**40), f"field 'hadm_id': {2**40} is out of range (32-bit integer)"),
    ("NUL character", _set("dep_graph.edges", ["a\x00b"]), "field 'dep_graph': contains a NUL character"),
    ("bool is not int", _set("difficulty_level", True), "field 'difficulty_level': expected integer, got boolean"),
    ("tier", _set("difficulty_level", 4), "field 'difficulty_level': 4 is not a tier (expected 1, 2 or 3)"),
    ("unknown scenario", _set("clinical_scenario", "oncology"), "field 'clinical_scenario': unknown value 'oncology'"),
    (
        "bad date form",
        _set("current_date", "02/07/2181"),
        "field 'current_date': '02/07/2181' is not a date in the form YYYY-MM-DD",
    ),
    ("impossible date", _set("current_date", "2181-02-30"), "field 'current_date': '2181-02-30' is not a valid date"),
    ("bad datetime", _set("generated_at", "yesterday"), "field 'generated_at': 'yesterday' is not an ISO datetime"),
    (
        "list lengths",
        _truncate("rubrics_zh", 3),
        "field 'rubrics_zh': 3 entries, but 'tasks' has 4 (one entry per turn)",
    ),
    (
        "alias lengths",
        lambda r: r.__setitem__("tasks_en", r["tasks"][:2]),
        "field 'tasks_en': 2 entries, but 'tasks' has 4",
    ),
    ("unknown task type", _set("task_types.2", "Chit-chat"), "field 'task_types[2]': unknown value 'Chit-chat'"),
    ("turn type", _set("turn_types.1", "yes"), "field 'turn_types[1]': expected boolean, got string"),
    ("subtype", _set("turn_subtypes.1", "XX"), "field 'turn_subtypes[1]': unknown value 'XX'"),
    ("tool source", _set("tool_sources.0", "fax"), "field 'tool_sources[0]': unknown value 'fax'"),
    ("optional field null", _set("tools_zh", None), "field 'tools_zh': expected list, got null"),
    ("request type", _set("tasks_zh.3", None), "field 'tasks_zh[3]': expected string, got null"),
    (
        "step without action",
        _set("answer_list.0.0", {"observation": {}}),
        "field 'answer_list[0][0].action': expected object, got null",
    ),
    (
        "last step",
        lambda r: r["answer_list"][2].pop(),
        "field 'answer_list[2][0].action.name': last step is 'Observation.search'",
    ),
    (
        "rubric item counts",
        lambda r: r["rubrics_zh"][3].pop(),
        "field 'rubrics_zh[3]': 5 item(s), but rubrics[3] has 6",
    ),
    ("rubric text", _set("rubrics.1.0", 7), "field 'rubrics[1][0]': expected string, got integer"),
    (
        "persona",
        _set("persona_config.adherence", "sometimes"),
        "field 'persona_config.adherence': unknown value 'sometimes'",
    ),
    (
        "conversation turns",
        lambda r: r["messages"].remove(r["messages"][3]),
        "field 'messages': 3 turn(s) separated by plain strings, expected 4",
    ),
    (
        "no answer",
        lambda r: r["messages_zh"].pop(1),
        "field 'messages_zh': turn 0 has no assistant message with text content",
    ),
    (
        "our extension",
        _set("physreview", {"turns": [{"rubric": [{"is_safety": True, "check": {"kind": "x"}}] * 3}] + [{}] * 3}),
        "field 'physreview.turns[0].rubric[0].check': unknown kind 'x'",
    ),
]


def _import_bad(tmp_path: Path, line2: Any) -> tuple[Path, list[str]]:
    path = write_jsonl(tmp_path / "bad.jsonl", [record(0), line2, record(2)])
    result = import_pab_file(path=path)
    return path, result.errors


@pytest.mark.parametrize("mutate,message", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_record_names_file_line_field_and_loads_nothing(tmp_path: Path, mutate, message: str) -> None:
    bad = record(1)
    mutate(bad)
    path, errors = _import_bad(tmp_path, bad)

    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}:2: {message}"), errors[0]
    assert not Session.objects.exists() and not Turn.objects.exists()
    assert not GenerationRun.objects.exists()


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"id": "x", ', "not valid JSON: Expecting property name enclosed in double quotes at column 13"),
        ("[1, 2]", "field '(record)': expected a JSON object, got list"),
        ('{"id": NaN}', "not valid JSON: NaN is not allowed in JSON"),
        (b'{"id": "\xff"}', "not valid UTF-8 (byte 0xff at column 9)"),
    ],
)
def test_unreadable_line_is_reported(tmp_path: Path, line, message: str) -> None:
    path, errors = _import_bad(tmp_path, line)
    assert errors == [f"{path}:2: {message}"]
    assert not Session.objects.exists()


def test_every_bad_line_is_reported(tmp_path: Path) -> None:
    a, b = record(0), record(1)
    a.pop("tool_sources")
    b["hadm_id"] = None
    path = write_jsonl(tmp_path / "two_bad.jsonl", [a, "", b, record(2)])  # line 2 blank: skipped

    errors = import_pab_file(path=path).errors

    assert errors == [
        f"{path}:1: field 'tool_sources': missing",
        f"{path}:3: field 'hadm_id': expected integer, got null",
    ]


def test_duplicate_ids_within_a_file(tmp_path: Path) -> None:
    twin = record(2)
    twin["session_id"] = "another"
    path = write_jsonl(tmp_path / "dup.jsonl", [record(2), twin])

    assert import_pab_file(path=path).errors == [
        f"{path}:2: field 'id': 'discharge_planning_7' already appears on line 1 of this file"
    ]


def test_bad_file_does_not_stop_the_others_and_the_command_fails(tmp_path: Path, capsys) -> None:
    bad = record(0)
    bad["clinical_scenario"] = "oncology"
    bad_path = write_jsonl(tmp_path / "bad.jsonl", [bad])
    good_path = write_jsonl(tmp_path / "good.jsonl", [record(1), record(2)])

    # (run_from_argv would show the exit code but closes the test database connection)
    with pytest.raises(CommandError) as exc:
        call_command("import_pab", "--quiet", str(bad_path), str(good_path))

    assert exc.value.returncode == 1  # manage.py exits with this
    assert str(exc.value) == f"1 file(s) failed and were not loaded: {bad_path}"
    err = capsys.readouterr().err
    assert f"{bad_path}:1: field 'clinical_scenario': unknown value 'oncology'" in err
    assert sorted(Session.objects.values_list("record_id", flat=True)) == [
        "diagnostic_workup_3",
        "discharge_planning_7",
    ]


def test_summary(tmp_path: Path, capsys) -> None:
    call_command("import_pab", str(SAMPLE))
    out = capsys.readouterr().out
    assert f"{SAMPLE}: 3 session(s) loaded, run " in out
    assert "3 session(s) loaded from 1 of 1 file(s)." in out


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_pab", str(tmp_path / "nope.jsonl"), "--quiet")


def test_existing_id_needs_replace(tmp_path: Path) -> None:
    import_pab_file(path=SAMPLE)
    changed = record(0)
    changed["env_info"] = "replaced"
    changed["rubrics"][0][0] = "States the potassium value"
    path = write_jsonl(tmp_path / "again.jsonl", [changed])

    errors = import_pab_file(path=path).errors
    assert errors == [f"{path}:1: field 'id': record 'med_safety_0' already exists (use --replace to overwrite it)"]
    assert Session.objects.get(record_id="med_safety_0").env_info != "replaced"

    result = import_pab_file(path=path, replace=True)
    assert (result.ok, result.loaded, result.replaced) == (True, 1, 1)
    assert Session.objects.count() == 3 and Turn.objects.count() == 12
    s = Session.objects.get(record_id="med_safety_0")
    assert s.env_info == "replaced"
    assert s.turns.get(index=0).rubric_items.get(idx=0).text_en == "States the potassium value"


def test_session_id_used_by_another_record(tmp_path: Path) -> None:
    import_pab_file(path=SAMPLE)
    other = record(0)
    other["id"] = "med_safety_99"
    path = write_jsonl(tmp_path / "clash.jsonl", [other])

    assert import_pab_file(path=path, replace=True).errors == [
        f"{path}:1: field 'session_id': 'physassistbench_med_safety_0' is already used by record 'med_safety_0'"
    ]


def test_parse_record_accepts_every_sample_record() -> None:
    parsed = [parse_record(r) for r in sample_records()]
    assert [len(p.turns) for p in parsed] == [4, 4, 4]


# Issue 36 F11: an empty file exited 0 and added an empty run each time; a deeply nested line ended in a
# RecursionError traceback.
@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file_fails_and_adds_no_run(tmp_path: Path, capsys, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("import_pab", "--quiet", str(path))
    assert exc.value.returncode == 1 and str(exc.value) == f"1 file(s) failed and were not loaded: {path}"
    assert f"{path}: no session records (the file is empty or holds only blank lines)" in capsys.readouterr().err
    assert not GenerationRun.objects.exists()


@pytest.mark.parametrize("depth", [65, 100_000])
def test_deeply_nested_line_is_a_line_error(tmp_path: Path, capsys, depth: int) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": ' + "[" * depth + "]" * depth + "}\n", encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("import_pab", "--quiet", str(path))
    assert f"{path}:1: JSON nested deeper than 64 levels" in capsys.readouterr().err
    assert not GenerationRun.objects.exists()
