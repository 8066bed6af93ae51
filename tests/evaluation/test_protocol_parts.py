"""Parts of ``--protocol release``: replay by call order with a literacy variant, the session's stored
schemas and Chinese gold in the EvalSession, and both protocols finishing with the rules oracle."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evaluation.dataset import EvalSession, EvalStep, EvalTurn, from_sessions, session_from_record
from evaluation.models import EvalRun, TurnResult
from evaluation.protocols.release import release_tools
from evaluation.replay import MISS_REPLY, OrderReplayBook
from scenarios.models import Session
from tests.ehr.factories import build_record
from tests.evaluation.release_fixture import WARFARIN_FIRST, WARFARIN_SECOND, import_release_sessions

ADHERENCE = "patient.get_medication_adherence"


def _session(*observations) -> EvalSession:
    steps = tuple(EvalStep(tool=ADHERENCE, arguments={"drug": "x"}, observation=o) for o in observations)
    turn = EvalTurn(
        index=0,
        task_type="DG",
        subtype=None,
        tool_source="patient",
        requests={"implicit": {"en": "?", "zh": "?"}, "explicit": {"en": "?", "zh": "?"}},
        gold_steps=steps,
        answers={"en": "", "zh": ""},
        rubric=(),
    )
    return EvalSession("s", "r", 1, 2, None, None, None, "med_safety", 1, (turn,))


def test_replay_by_order_ignores_arguments_and_starts_over():
    book = OrderReplayBook.for_session(_session(WARFARIN_FIRST, WARFARIN_SECOND), language="en")
    texts = [book.reply(tool="patient__get_medication_adherence", language="en", literacy="low") for _ in range(3)]
    assert [r.observation["patient_response"] for r, _ in texts] == [
        WARFARIN_FIRST["patient_responses_all_literacy"]["low"],
        WARFARIN_SECOND["patient_responses_all_literacy"]["low"],
        WARFARIN_FIRST["patient_responses_all_literacy"]["low"],
    ]
    assert all(r.hit and not fallback for r, fallback in texts)
    miss, fallback = book.reply(tool="patient.get_pain_assessment", language="zh", literacy="low")
    assert (miss.hit, miss.observation, fallback) == (False, {"patient_response": MISS_REPLY["zh"]}, False)


def test_a_missing_literacy_variant_falls_back_to_patient_response_and_is_counted():
    plain = {"patient_response": "I feel fine."}
    generated = {"resourceType": "PatientAnswer", "answer": "Mostly fine.", "answer_zh": "还好。", "language": "en"}
    book = OrderReplayBook.for_session(_session(plain, generated), language="zh")
    first, fallback = book.reply(tool=ADHERENCE, language="zh", literacy="high")
    assert (first.observation["patient_response"], fallback, first.language_fallback) == ("I feel fine.", True, True)
    second, fallback = book.reply(tool=ADHERENCE, language="zh", literacy="high")
    assert (second.observation["patient_response"], fallback, second.language_fallback) == ("还好。", True, False)


@pytest.mark.django_db
def test_release_records_keep_their_schemas_env_info_and_chinese_gold(demo_cohort):
    records = import_release_sessions(build_record())
    from_db = {s.session_id: s for s in from_sessions(Session.objects.all()).sessions}
    for record in records:
        from_record = session_from_record(json.loads(json.dumps(record)))
        db = from_db[record["session_id"]]
        assert from_record == db
        assert db.env_info == record["env_info"] and list(db.tool_schemas("en")) == record["tools"]
        assert list(db.tool_schemas("zh")) == record["tools_zh"]
        zh = db.turns[-1].steps_for("zh")
        assert [s.observation for s in zh] == [s["observation"] for s in record["answer_list_zh"][-1]]
        assert db.turns[-1].steps_for("en") == db.turns[-1].gold_steps
    release_a = from_db["physassistbench_release_a"]
    assert [s.observation["patient_response"][:7] for s in release_a.patient_steps("zh")] == [
        "每晚吃华法林，",
        "没发现出血。",
    ]
    tools = release_tools(session=release_a, language="en")
    assert [t["function"]["name"] for t in tools].count("prepare_to_answer") == 1
    # the record's own prepare_to_answer wins (issue 33); a record without one gets the parameterless one
    (prepare,) = [t for t in tools if t["function"]["name"] == "prepare_to_answer"]
    assert "answer_type" in prepare["function"]["parameters"]["properties"]


@pytest.mark.django_db
def test_both_protocols_finish_with_the_oracle_on_generated_sessions(sessions, tmp_path):
    scores = {}
    for protocol in ("physreview", "release"):
        out = tmp_path / protocol
        call_command(
            "runeval", "--model", "rules:oracle", "--snapshot", "none", "--sessions", "all", "--protocol", protocol,
            "--processes", "1", "--quiet", "--output", str(out),
        )  # fmt: skip
        summary = json.loads((out / "summary.json").read_text())
        run = EvalRun.objects.get(pk=summary["run_id"])
        assert run.status == "finished" and run.manifest["protocol"]["name"] == protocol
        scores[protocol] = summary["metrics"]["en"]["mRS"]["all"]
        results = list(TurnResult.objects.filter(run=run))
        assert len(results) == 4 * len(sessions)
        for r in results:  # the oracle still makes the gold calls; the patient is always found
            assert r.trace["diagnostics"]["missing_calls"] == [] and r.trace["replay_misses"] == 0
    physreview = EvalRun.objects.get(manifest__protocol__name="physreview").manifest["protocol"]
    assert (physreview["observations"], physreview["patient_replay"], physreview["bounds"]) == (
        "json",
        "arguments",
        "strict",
    )
    assert (physreview["max_steps"], physreview["literacy"], physreview["judge_mode"]) == (16, None, "rules")
    assert scores["physreview"] >= 0.95 and scores["release"] == scores["physreview"]
