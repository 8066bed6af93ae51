"""Tool-call diagnostics by tool + key arguments: missing, extra and argument-mismatched calls."""

import json

from django.core.management import call_command

from evaluation.dataset import EvalStep, EvalTurn
from evaluation.diagnostics import compare_calls, key_arguments
from evaluation.turn_log import diagnostics

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
        "subject_id": 10001,
        "hadm_id": 2001,
        "_count": 3,
        "date_from": "2180-01-01",
        "code": "  Creatinine ",
        "category": "laboratory",
    }
    assert key_arguments(tool=LAB, arguments=args) == {"code": "creatinine", "category": "laboratory"}
    asked = {"subject_id": 1, "session_id": "s", "drug": "Furosemide"}
    assert key_arguments(tool=ADHERENCE, arguments=asked) == {"drug": "furosemide"}
    # Dose spacing and case do not matter; free wording (indication) is no key argument.
    order = {"medication": "Apixaban", "dose": "2.5 MG", "route": "PO", "frequency": "BID", "indication": "AF"}
    assert key_arguments(tool="MedicationRequest.create", arguments=order) == {
        "medication": "apixaban",
        "dose": "2.5mg",
        "route": "po",
        "frequency": "bid",
    }
    # A tool outside the registry keeps what is not ignored; unparsable arguments are no arguments.
    assert key_arguments(tool="Made.up", arguments={"patient": 1, "x": "A"}) == {"x": "a"}
    assert key_arguments(tool=LAB, arguments=None) == {}


def test_key_arguments_are_in_the_contracts_terms():
    """Aliases, placeholders and old enum values of a model's call compare as the contract call."""
    contract = key_arguments(tool=LAB, arguments={"subject_id": 1, "category": "laboratory", "code": "creatinine"})
    for made in (
        {"patient": 1, "encounter": 0, "type": "lab", "test_name": "Creatinine", "date_to": ""},
        {"type": "labs", "item_name": "creatinine", "_count": 0},
    ):
        assert key_arguments(tool=LAB, arguments=made) == contract
    assert key_arguments(tool=LAB, arguments={"lab_test": "creatinine", "category": "vitals"})["category"] == (
        "vital-signs"
    )
    # A value the tool refuses does not hide the others: it is kept as given.
    assert key_arguments(tool=LAB, arguments={"category": "bloodwork", "test_name": "INR"}) == {
        "category": "bloodwork",
        "code": "inr",
    }
    assert key_arguments(tool=ADHERENCE, arguments={"medication": "Warfarin", "patient": 3}) == {"drug": "warfarin"}
    assert key_arguments(tool="patient.get_symptom_history", arguments={"symptom": "Chest  pain"}) == {
        "query": "chest pain"
    }
    assert key_arguments(tool="ServiceRequest.create", arguments={"code": "BMP", "priority": "stat"}) == {
        "service_type": "bmp",
        "priority": "asap",
    }
    # Unknown arguments are no arguments (the tool drops them).
    assert key_arguments(tool="Condition.search", arguments={"code": "I50", "date_from": "2180-01-01"}) == {
        "code": "i50"
    }


def test_gold_of_an_earlier_version_matches_the_contract_call():
    gold = [
        (LAB, {"patient": 1, "encounter": 2, "code": "creatinine", "category": "laboratory", "_count": 5}),
        ("MedicationRequest.search", {"encounter": 2, "code": "warfarin"}),
        (ADHERENCE, {"medication": "warfarin", "question": "How do you take it?"}),
        (
            "MedicationRequest.create",
            {"medication": "warfarin", "status": "on-hold", "route": "PO", "frequency": "daily", "encounter": 2},
        ),
        ("DocumentReference.search", {"encounter": 2, "type": "discharge", "section": "Discharge Medications"}),
    ]
    made = [
        (LAB, {"subject_id": 1, "hadm_id": 2, "code": "creatinine", "category": "laboratory"}),
        ("MedicationRequest.search", {"subject_id": 1, "hadm_id": 2, "medication": "warfarin"}),
        (ADHERENCE, {"drug": "Warfarin"}),
        (
            "MedicationRequest.create",
            {"subject_id": 1, "medication": "warfarin", "dose": "hold", "route": "PO", "frequency": "daily"},
        ),
        (
            "DocumentReference.search",
            {"subject_id": 1, "hadm_id": 2, "type_code": "discharge-summary", "keyword": "discharge medications"},
        ),
    ]
    assert compare_calls(gold=gold, made=made) == {"missing_calls": [], "extra_calls": [], "argument_mismatches": []}
    # A made call is read as the tool ran it: an old status is no dose (the order was refused).
    refused = [*made[:3], ("MedicationRequest.create", {"medication": "warfarin", "status": "on-hold"}), made[4]]
    got = compare_calls(gold=gold, made=refused)
    assert got["argument_mismatches"][0]["made"] == {"medication": "warfarin"}


def test_same_calls_with_other_wording_match():
    gold = [(LAB, {"subject_id": 1, "code": "creatinine", "category": "laboratory", "_count": 5})]
    made = [(LAB, {"code": "CREATININE", "category": "laboratory", "_count": 1}), ("prepare_to_answer", {})]
    assert compare_calls(gold=gold, made=made) == {"missing_calls": [], "extra_calls": [], "argument_mismatches": []}


def test_same_tool_other_arguments_is_a_mismatch_not_a_match():
    gold = [
        (LAB, {"code": "creatinine", "category": "laboratory"}),
        (LAB, {"code": "potassium", "category": "laboratory"}),
        (ADHERENCE, {"drug": "warfarin"}),
    ]
    made = [
        (LAB, {"code": "potassium"}),  # right test, no category
        (LAB, {"code": "sodium", "category": "laboratory"}),  # wrong test
        (ADHERENCE, {"question": "Do you take your warfarin?"}),  # the drug only in the wording (dropped)
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
        {"tool": ADHERENCE, "gold": {"drug": "warfarin"}, "made": {}},
    ]


def test_missing_and_extra_are_multisets_with_labels():
    gold = [(LAB, {"code": "inr"}), (LAB, {"code": "inr"}), ("AllergyIntolerance.search", {"subject_id": 1})]
    made = [(LAB, {"code": "inr"}), ("MedicationRequest.search", {"medication": "warfarin", "status": "active"})]
    got = compare_calls(gold=gold, made=made)
    assert got["missing_calls"] == ["AllergyIntolerance.search", "Observation.search(code=inr)"]
    assert got["extra_calls"] == ["MedicationRequest.search(medication=warfarin, status=active)"]
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
    assert diagnostics(turn=turn, calls=calls) == {
        "missing_calls": [],
        "extra_calls": [],
        "argument_mismatches": [],
        "dropped_arguments": [],
    }
    warned = "unknown argument 'units' ignored; Observation.search takes: subject_id, hadm_id, ..."
    wrong = [{"name": LAB, "arguments": {"code": "platelet", "category": "laboratory"}, "warnings": [warned]}]
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
        "dropped_arguments": [{"tool": LAB, "warning": warned}],
    }


def _traces(tmp_path, model):
    out = tmp_path / model.replace(":", "_")
    call_command("runeval", "--model", model, "--judge", "rules", "--sessions", "all", "--quiet", "--output", str(out))
    return [json.loads(line)["trace"] for line in (out / "turns.jsonl").read_text().splitlines()]


def test_runeval_traces_carry_the_diagnostics(sessions, tmp_path):
    oracle = _traces(tmp_path, "rules:oracle")
    assert oracle and all(
        t["diagnostics"] == {"missing_calls": [], "extra_calls": [], "argument_mismatches": [], "dropped_arguments": []}
        for t in oracle
    )
    assert all(t["unknown_arguments"] == 0 for t in oracle)
    heuristic = _traces(tmp_path, "rules:heuristic")
    found = [t["diagnostics"] for t in heuristic]
    assert any(d["missing_calls"] or d["argument_mismatches"] for d in found)
    for d in found:
        assert all(isinstance(x, str) for x in d["missing_calls"] + d["extra_calls"])
        assert all(set(m) == {"tool", "gold", "made"} for m in d["argument_mismatches"])
    # The heuristic asks in the contract's terms: nothing of its calls is dropped.
    assert all(t["unknown_arguments"] == 0 and not t["diagnostics"]["dropped_arguments"] for t in heuristic)
