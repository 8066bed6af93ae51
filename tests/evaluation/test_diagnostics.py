"""Tool-call diagnostics by tool + key arguments: missing, extra and argument-mismatched calls."""

import json

from django.core.management import call_command

from evaluation.agent import diagnostics
from evaluation.dataset import EvalStep, EvalTurn
from evaluation.diagnostics import compare_calls, key_arguments

LAB = "Observation.search"
ADHERENCE = "patient.get_medication_adherence"


def _turn(*steps: tuple[str, dict]) -> EvalTurn:
    gold = tuple(EvalStep(tool=t, arguments=a, observation=None) for t, a in steps)
    return EvalTurn(
        index=1,
        task_type="DG",
        subtype=None,
        tool_source="ehr",
        requests={"implicit": {"en": "", "zh": ""}, "explicit": {"en": "x", "zh": "x"}},
        gold_steps=(*gold, EvalStep(tool="prepare_to_answer", arguments={}, observation="ok")),
        answers={"en": "", "zh": ""},
        rubric=(),
    )


def test_key_arguments_ignore_ids_count_dates_and_wording():
    args = {
        "patient": 10001,
        "encounter": 2001,
        "_count": 3,
        "date_from": "2180-01-01",
        "code": "  Creatinine ",
        "category": "laboratory",
    }
    assert key_arguments(tool=LAB, arguments=args) == {"code": "creatinine", "category": "laboratory"}
    asked = {"subject_id": 1, "session_id": "s", "question": "Do you take it?", "medication": "Furosemide"}
    assert key_arguments(tool=ADHERENCE, arguments=asked) == {"medication": "furosemide"}
    # A key argument left out counts as its declared default; dose spacing and case do not matter.
    order = {"medication": "Apixaban", "dose": "2.5 MG", "route": "PO", "frequency": "BID", "reason": "AF"}
    assert key_arguments(tool="MedicationRequest.create", arguments=order) == {
        "medication": "apixaban",
        "dose": "2.5mg",
        "route": "po",
        "frequency": "bid",
        "status": "active",
    }
    # A tool outside the registry keeps what is not ignored; unparsable arguments are no arguments.
    assert key_arguments(tool="Made.up", arguments={"patient": 1, "x": "A"}) == {"x": "a"}
    assert key_arguments(tool=LAB, arguments=None) == {}


def test_same_calls_with_other_wording_match():
    gold = [(LAB, {"patient": 1, "code": "creatinine", "category": "laboratory", "_count": 5})]
    made = [(LAB, {"code": "CREATININE", "category": "laboratory", "_count": 1}), ("prepare_to_answer", {})]
    assert compare_calls(gold=gold, made=made) == {"missing_calls": [], "extra_calls": [], "argument_mismatches": []}


def test_same_tool_other_arguments_is_a_mismatch_not_a_match():
    gold = [
        (LAB, {"code": "creatinine", "category": "laboratory"}),
        (LAB, {"code": "potassium", "category": "laboratory"}),
        (ADHERENCE, {"medication": "warfarin", "question": "How do you take it?"}),
    ]
    made = [
        (LAB, {"code": "potassium"}),  # right test, no category
        (LAB, {"code": "sodium", "category": "laboratory"}),  # wrong test
        (ADHERENCE, {"question": "Do you take your warfarin?"}),  # the drug only in the wording
        ("Condition.search", {"code": "I50"}),
    ]
    got = compare_calls(gold=gold, made=made)
    assert got["missing_calls"] == []
    assert got["extra_calls"] == ["Condition.search(code=i50)"]
    # Pairs are chosen by the most shared key arguments: potassium with potassium, creatinine with sodium.
    assert got["argument_mismatches"] == [
        {
            "tool": LAB,
            "gold": {"category": "laboratory", "code": "creatinine"},
            "made": {"category": "laboratory", "code": "sodium"},
        },
        {"tool": LAB, "gold": {"category": "laboratory", "code": "potassium"}, "made": {"code": "potassium"}},
        {"tool": ADHERENCE, "gold": {"medication": "warfarin"}, "made": {}},
    ]


def test_missing_and_extra_are_multisets_with_labels():
    gold = [(LAB, {"code": "inr"}), (LAB, {"code": "inr"}), ("AllergyIntolerance.search", {"patient": 1})]
    made = [(LAB, {"code": "inr"}), ("MedicationRequest.search", {"code": "warfarin", "status": "active"})]
    got = compare_calls(gold=gold, made=made)
    assert got["missing_calls"] == ["AllergyIntolerance.search", "Observation.search(code=inr)"]
    assert got["extra_calls"] == ["MedicationRequest.search(code=warfarin, status=active)"]
    assert got["argument_mismatches"] == []  # the second INR search is missing, and no other lab search is left
    got = compare_calls(gold=gold, made=[])
    assert got["missing_calls"] == [
        "AllergyIntolerance.search",
        "Observation.search(code=inr)",
        "Observation.search(code=inr)",
    ]


def test_agent_diagnostics_reads_the_calls_of_a_turn():
    turn = _turn((LAB, {"code": "hemoglobin", "category": "laboratory"}), ("CarePlan.search", {}))
    calls = [
        {"name": LAB, "arguments": {"code": "Hemoglobin", "category": "laboratory", "_count": 3}},
        {"name": "CarePlan.search", "arguments": None},  # a call whose arguments did not parse still counts
        {"name": "prepare_to_answer", "arguments": {}},
    ]
    assert diagnostics(turn=turn, calls=calls) == {"missing_calls": [], "extra_calls": [], "argument_mismatches": []}
    wrong = [{"name": LAB, "arguments": {"code": "platelet", "category": "laboratory"}}]
    assert diagnostics(turn=turn, calls=wrong) == {
        "missing_calls": ["CarePlan.search"],
        "extra_calls": [],
        "argument_mismatches": [
            {
                "tool": LAB,
                "gold": {"category": "laboratory", "code": "hemoglobin"},
                "made": {"category": "laboratory", "code": "platelet"},
            }
        ],
    }


def _traces(tmp_path, model):
    out = tmp_path / model.replace(":", "_")
    call_command("runeval", "--model", model, "--judge", "rules", "--sessions", "all", "--quiet", "--output", str(out))
    return [json.loads(line)["trace"] for line in (out / "turns.jsonl").read_text().splitlines()]


def test_runeval_traces_carry_the_diagnostics(sessions, tmp_path):
    oracle = _traces(tmp_path, "rules:oracle")
    assert oracle and all(
        t["diagnostics"] == {"missing_calls": [], "extra_calls": [], "argument_mismatches": []} for t in oracle
    )
    heuristic = _traces(tmp_path, "rules:heuristic")
    found = [t["diagnostics"] for t in heuristic]
    assert any(d["missing_calls"] or d["argument_mismatches"] for d in found)
    for d in found:
        assert all(isinstance(x, str) for x in d["missing_calls"] + d["extra_calls"])
        assert all(set(m) == {"tool", "gold", "made"} for m in d["argument_mismatches"])
