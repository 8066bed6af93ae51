"""Rules-backend session generation against the demo cohort: every scenario × tier passes the gates,
is deterministic, respects arcs/subtypes/counts and the date cutoff."""

from __future__ import annotations

import datetime as dt
import json
import re
from functools import cache

import pytest

from ehr import models as m
from ehr.fhir import REGISTRY
from scenarios.generation import check_session, generate_session, plan_session
from scenarios.generation.facts import AdmissionFacts
from scenarios.generation.planner import ARCS, _days
from scenarios.generation.types import RUBRIC_COUNTS, SCENARIOS, TIERS, GenerationOutcome
from tests.scenarios.contract import contract_problems

SECTIONS = {
    "patient.get_medication_adherence": "Medications on Admission",
    "patient.get_symptom_history": "History of Present Illness",
    "patient.get_social_history": "Social History",
}


def _section(text: str, heading: str) -> str:
    match = re.search(rf"^{re.escape(heading)}:\s*\n?(.*?)(?:\n\s*\n|\Z)", text, re.S | re.M)
    return " ".join(match.group(1).split()) if match else ""


def record_patient(*, tool: str, arguments: dict) -> dict:
    """Test stand-in for the agentic patient: answers with the text of its own discharge note section."""
    note = m.DischargeNote.objects.filter(subject_id=arguments["subject_id"]).order_by("charttime").first()
    said = _section(note.text, SECTIONS.get(tool, "Social History")) if note else ""
    # The note is English: its Chinese answer quotes it as the record's words (the content gates refuse bare English).
    said_zh = f"病历原文“{said}”" if said else "我不太清楚。"
    return {"answer_en": said or "I am not sure.", "answer_zh": said_zh, "source": SECTIONS.get(tool)}


@cache
def outcome(scenario: str, tier: int, seed: int = 1, index: int = 0) -> GenerationOutcome:
    return generate_session(scenario=scenario, tier=tier, seed=seed, index=index, patient_answer=record_patient)


ALL = [(s, t) for s in SCENARIOS for t in TIERS]


@pytest.mark.parametrize(("scenario", "tier"), ALL)
def test_every_scenario_and_tier_passes_all_gates(demo_cohort, scenario, tier):
    result = outcome(scenario, tier)
    assert result.status == "passed", [(f.gate, f.turn, f.message) for f in result.reasons]
    draft = result.draft
    assert check_session(draft) == []
    assert (draft.scenario, draft.tier, len(draft.turns)) == (scenario, tier, 4)
    for turn in draft.turns:
        for text in (
            turn.request_explicit_en,
            turn.request_implicit_en,
            turn.request_explicit_zh,
            turn.request_implicit_zh,
            turn.answer_en,
            turn.answer_zh,
        ):
            assert text.strip()
        assert re.search(r"[\u4e00-\u9fff]", turn.answer_zh)


@pytest.mark.parametrize(("scenario", "tier"), [("med_safety", 2), ("discharge_planning", 3)])
def test_same_seed_gives_identical_json(demo_cohort, scenario, tier):
    kwargs = {"scenario": scenario, "tier": tier, "seed": 7, "index": 3, "patient_answer": record_patient}
    first = json.dumps(generate_session(**kwargs).draft.to_dict(), ensure_ascii=False, sort_keys=True)
    second = json.dumps(generate_session(**kwargs).draft.to_dict(), ensure_ascii=False, sort_keys=True)
    assert first == second


def test_several_indexes_and_seeds_pass(demo_cohort):
    failed = []
    for scenario, tier in ALL:
        for seed, index in ((2, 1), (3, 5)):
            result = outcome(scenario, tier, seed, index)
            if result.status != "passed":
                failed.append((scenario, tier, seed, index, [f.message for f in result.reasons]))
    assert failed == []


@pytest.mark.parametrize(("scenario", "tier"), ALL)
def test_arcs_subtypes_and_counts(demo_cohort, scenario, tier):
    draft = outcome(scenario, tier).draft
    types = tuple(t.task_type for t in draft.turns)
    assert ARCS[draft.sequence_idx] == types
    assert types[0] == "IL" and set(types[1:3]) <= {"IL", "DG", "CR"} and types[3] in {"DG", "CR", "WU"}
    assert draft.turns[0].subtype is None and not draft.turns[0].is_implicit
    for turn in draft.turns[1:]:
        assert turn.is_implicit and turn.subtype in {"NA", "PE", "AE"}
        assert turn.request_implicit_en != turn.request_explicit_en
        if turn.subtype == "NA":  # the pronoun points at something an earlier turn established
            assert any(turn.entity in earlier.entities for earlier in draft.turns[: turn.index])
    for turn in draft.turns:
        calls = [s for s in turn.steps if s.tool != "prepare_to_answer"]
        kinds = [REGISTRY[s.tool].kind for s in calls]
        assert turn.steps[-1].tool == "prepare_to_answer"
        low, high = RUBRIC_COUNTS[turn.task_type]
        assert low <= len(turn.rubric) <= high
        if turn.task_type == "IL":
            assert kinds == ["ehr"]
        elif turn.task_type == "DG":
            assert 2 <= len(calls) <= 4 and turn.workup_mode in {"parallel", "adaptive"}
        elif turn.task_type == "WU":
            assert kinds == ["write"]
            assert any((r.check or {}).get("kind") == "write_call" for r in turn.rubric)
        elif turn.task_type == "CR":
            assert "ehr" in kinds


def test_tier_constraints_visible_in_turns(demo_cohort):
    for scenario in SCENARIOS:
        assert {t.kind for t in outcome(scenario, 2).draft.turns} & {"cr_trend", "cr_crcl", "cr_threshold"}
        assert {t.kind for t in outcome(scenario, 3).draft.turns} & {"cr_interaction", "cr_renal_dosing"}


def test_cockcroft_gault_is_declared_with_inputs(demo_cohort):
    drafts = [outcome(s, t, seed, i).draft for s, t in ALL for seed, i in ((1, 0), (2, 1), (3, 5))]
    derivations = [
        d for draft in drafts for turn in draft.turns for d in turn.derivations if d.name == "cockcroft_gault"
    ]
    assert derivations, "no session computed Cockcroft-Gault"
    for d in derivations:
        inputs = d.inputs
        factor = 0.85 if inputs["sex"] == "F" else 1.0
        expected = (140 - inputs["age"]) * inputs["weight_kg"] / (72 * inputs["creatinine_mg_dl"]) * factor
        assert d.result == pytest.approx(expected, abs=0.06)
        assert d.unit == "mL/min"


def _dates(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _dates(v)
    elif isinstance(value, list):
        for v in value:
            yield from _dates(v)
    elif isinstance(value, str):
        yield from re.findall(r"\b(\d{4}-\d{2}-\d{2})\b", value)


@pytest.mark.parametrize(("scenario", "tier"), ALL)
def test_no_gold_observation_after_current_date(demo_cohort, scenario, tier):
    draft = outcome(scenario, tier).draft
    today = dt.date.fromisoformat(draft.current_date)
    for turn in draft.turns:
        for step in turn.steps:
            if REGISTRY[step.tool].kind != "ehr":
                continue
            for day in _dates(step.observation):
                # Visible iff charted before 00:00 of the current date: nothing of that day itself.
                assert dt.date.fromisoformat(day) < today, (turn.index, step.tool, day)


@pytest.mark.parametrize(("scenario", "tier"), ALL)
def test_every_gold_call_is_in_the_released_contract(demo_cohort, scenario, tier):
    """Argument names are the contract's only, in its order; a re-run gives no warnings, no error, the same result."""
    for seed, index in ((1, 0), (2, 1), (3, 5)):
        draft = outcome(scenario, tier, seed, index).draft
        steps = [(t.index, s.tool, s.arguments, s.observation) for t in draft.turns for s in t.steps]
        for _, tool, arguments, _ in steps:
            contract = [p.name for p in REGISTRY[tool].params]
            assert list(arguments) == [name for name in contract if name in arguments], (tool, arguments)
        checks = [r.check for t in draft.turns for r in t.rubric]
        problems = contract_problems(
            session_id=draft.session_id,
            subject_id=draft.subject_id,
            hadm_id=draft.hadm_id,
            current_date=draft.current_date,
            steps=steps,
            checks=checks,
        )
        assert problems == []
        for turn in draft.turns:
            assert turn.steps[-1].arguments == {"answer_type": "tool"}
            assert turn.steps[-1].observation == turn.answer_en  # the gold summary stays its observation


def test_write_turns_use_the_contract_parameters(demo_cohort):
    """Hold = dose 'hold' with the current order's route and frequency; repeat lab = service_type, priority,
    target_date, note; alert = Flag of category safety with code and detail."""
    drafts = [outcome(s, t, seed, i).draft for s, t in ALL for seed, i in ((1, 0), (2, 1), (3, 5))]
    writes = {s.tool: s.arguments for d in drafts for t in d.turns if t.task_type == "WU" for s in t.steps[:-1]}
    assert set(writes) >= {"ServiceRequest.create", "Flag.create"}
    for tool, args in writes.items():
        required = {p.name for p in REGISTRY[tool].params if p.required}
        assert required <= set(args), (tool, args)
    lab = writes["ServiceRequest.create"]
    assert lab["priority"] in ("routine", "urgent", "asap") and lab["target_date"]
    flag = writes["Flag.create"]
    assert flag["category"] == "safety" and flag["code"].startswith("drug interaction") and flag["detail"]
    # Holds are rarer (a holdable drug past its threshold, its order fetched by an earlier turn): look further.
    held = [outcome("med_safety", 1, seed, i).draft for seed in (1, 3) for i in range(12)]
    holds = [(d, t, s) for d in held for t in d.turns for s in t.steps if s.tool == "MedicationRequest.create"]
    assert holds, "no session holds a drug"
    for draft, turn, hold in holds:
        order = next(
            r["dosageInstruction"][0]
            for t in draft.turns[: turn.index]
            for s in t.steps
            if s.tool == "MedicationRequest.search"
            for r in (e["resource"] for e in s.observation["entry"])
            if r["medicationCodeableConcept"]["text"].lower() == hold.arguments["medication"]
        )
        assert hold.arguments["dose"] == "hold" and hold.arguments["route"] == order["route"]["text"]
        assert hold.arguments["frequency"] and hold.arguments["indication"]
        assert hold.observation["status"] == "on-hold"
        assert {"dose": "hold"} in [
            r.check["params"] for r in turn.rubric if (r.check or {}).get("kind") == "write_call"
        ]
    checks = [
        r.check["params"]
        for d in drafts
        for t in d.turns
        for r in t.rubric
        if (r.check or {}).get("kind") == "write_call"
    ]
    assert checks and not any({"status", "replaces", "occurrence_date", "reason"} & set(p) for p in checks)


def test_planner_facts_follow_the_cutoff():
    """A session on a day sees nothing charted that day: the planner's index reads the same rule."""
    day = dt.date(2150, 1, 5)
    facts = AdmissionFacts(
        subject_id=1,
        hadm_id=2,
        admit=dt.date(2150, 1, 1),
        discharge=dt.date(2150, 1, 6),
        gender="F",
        principal_dx="Hyperkalemia",
        labs={"Potassium": [(dt.datetime(2150, 1, 4, 23, 59), 5.1), (dt.datetime(2150, 1, 5, 4, 52), 5.9)]},
        weight_dates=[day],
        discharge_note_date=dt.date(2150, 1, 6),
        has_followup=True,
    )
    assert facts.labs_by(label="Potassium", day=day) == [5.1]
    assert not facts.weight_by(day=day) and facts.weight_by(day=day + dt.timedelta(days=1))
    assert _days(facts, "med_safety")[-1] == facts.discharge
    # Discharge planning is set the day after discharge: the note charted on the discharge day shows then.
    assert _days(facts, "discharge_planning") == [dt.date(2150, 1, 7)]


def test_env_info_and_serialisation(demo_cohort):
    draft = outcome("med_safety", 1).draft
    lines = draft.env_info.splitlines()
    assert lines[0] == f"session_id: {draft.session_id}"
    assert re.fullmatch(r"Current date: \d{4}-\d{2}-\d{2}\. Patient is an? \d+-year-old [MF]", lines[1])
    data = json.loads(json.dumps(draft.to_dict(), ensure_ascii=False))
    assert data["dep_graph"]["nodes"]["0"]["task_type"] == "IL"
    assert len(data["session_plan"]["turns"]) == 4
    assert all("dependency_list" in s for t in data["turns"] for s in t["steps"])


def test_planner_is_deterministic_and_spreads_admissions(demo_cohort):
    plans = [plan_session(scenario="treatment_response", tier=2, seed=5, index=i) for i in range(6)]
    again = [plan_session(scenario="treatment_response", tier=2, seed=5, index=i) for i in range(6)]
    assert plans == again
    assert len({p.hadm_id for p in plans}) >= 3


def test_patient_tools_go_through_the_injected_callable(demo_cohort):
    calls = []

    def patient(*, tool: str, arguments: dict) -> dict:
        calls.append((tool, arguments))
        return record_patient(tool=tool, arguments=arguments)

    drafts = [
        generate_session(scenario="med_safety", tier=1, seed=1, index=i, patient_answer=patient).draft for i in range(6)
    ]
    assert calls, "no session asked the patient"
    steps = [s for d in drafts for t in d.turns for s in t.steps if s.tool.startswith("patient.")]
    assert len(steps) == len(calls)
    for tool, arguments in calls:
        assert tool.startswith("patient.")
        # The patient gets the released contract's arguments only (query / drug, no topic or question).
        assert {"session_id", "subject_id"} <= arguments.keys() <= {p.name for p in REGISTRY[tool].params}
    for d in drafts:
        for t in d.turns:
            for s in t.steps:
                if s.tool.startswith("patient."):
                    assert s.arguments["subject_id"] == d.subject_id and s.arguments["session_id"] == d.session_id


def test_context_taking_responder_gets_the_session_cutoff_and_a_chinese_question(demo_cohort):
    seen = []

    def responder(*, tool: str, arguments: dict, context) -> dict:
        seen.append((arguments.get("language"), context.current_date, context.session_id))
        said = record_patient(tool=tool, arguments=arguments)["answer_en"]
        if arguments.get("language") == "zh":  # the English note, quoted as the record's words
            return {"answer": f"[中文] 病历原文“{said}”"}
        return {"answer": f"[en] {said}"}

    drafts = [
        generate_session(scenario="diagnostic_workup", tier=1, seed=1, index=i, patient_answer=responder).draft
        for i in range(6)
    ]
    assert seen and {lang for lang, _, _ in seen} == {None, "zh"}
    by_session = {d.session_id: d.current_date for d in drafts}
    assert all(by_session[sid] == day.isoformat() for _, day, sid in seen)
    zh_answers = [t.answer_zh for d in drafts for t in d.turns if t.tool_source in ("patient", "mixed")]
    assert zh_answers and all("[中文]" in a for a in zh_answers)
