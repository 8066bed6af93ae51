"""``runeval --protocol release`` against the scripted fake server, on sessions in the release's shape:
the exact requests the model and the judge receive (messages, tools, compact observations, steps cap,
temperature, output budget), patient replay by call order, resume, and the manifest."""

from __future__ import annotations

import copy
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.judges import release as release_judge
from evaluation.models import EvalRun, TurnResult
from evaluation.protocols import release
from tests.ehr.factories import build_record
from tests.evaluation.release_fixture import (
    CREATININE_TEXT,
    WARFARIN_FIRST,
    WARFARIN_FIRST_ZH,
    WARFARIN_SECOND,
    import_release_sessions,
)
from tests.evaluation.runeval_helpers import runeval_summary
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, completion, tool_call

pytestmark = pytest.mark.django_db

PREPARED = json.dumps(
    {"status": "ready", "message": "Information gathering is complete. Now write the final answer to the physician."},
    ensure_ascii=False,
)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("B_FAKE_KEY", "sk-fake-b-123456789")


@pytest.fixture
def released(demo_cohort):
    rec = build_record()
    return rec, import_release_sessions(rec)


def _is_judge(payload) -> bool:
    system = payload["messages"][0]["content"]
    return system in (*release_judge.ANSWER_SYSTEM.values(), *release_judge.WRITE_SYSTEM.values())


class Model:
    """The scripted model under test (and judge) for the two release sessions, keyed by the request."""

    def __init__(self, rec):
        self.s, self.h = rec.subject_id, rec.current_hadm

    def __call__(self, payload) -> Scripted:
        if _is_judge(payload):
            n = len([line for line in payload["messages"][1]["content"].split("\n") if line[:1].isdigit()])
            return completion(content=json.dumps({"scores": [1] + [0] * (n - 1), "reasoning": ["ok"] * n}))
        messages = payload["messages"]
        if payload.get("tool_choice") == "none":
            question = next(m["content"] for m in reversed(messages[:-1]) if m["role"] == "user")
            return completion(content=f"final answer to: {question}")
        request = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        started = messages[-1]["role"] == "user"
        ids = {"subject_id": self.s, "hadm_id": self.h}
        if request == "What is her latest creatinine?":
            return completion(
                tool_calls=[
                    tool_call(
                        name="Observation__search",
                        arguments={**ids, "category": "laboratory", "code": "creatinine"},
                        call_id="c1",
                    ),
                    tool_call(name="prepare_to_answer", arguments={}, call_id="c2"),
                ]
            )
        if request == "And her warfarin?":
            if started:  # other arguments than the gold's: the release replays by order anyway
                return completion(
                    tool_calls=[
                        tool_call(
                            name="patient__get_medication_adherence", arguments={"drug": "coumadin"}, call_id="p1"
                        )
                    ]
                )
            return completion(content="She takes warfarin 5 mg each evening and missed a dose.")
        if request == "Any bleeding with it?":
            last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
            step = sum(bool(m.get("tool_calls")) for m in messages[last_user:])
            if step == 0:
                return completion(
                    tool_calls=[
                        tool_call(
                            name="patient__get_medication_adherence", arguments={"drug": "warfarin"}, call_id="b0"
                        )
                    ]
                )
            # never stops calling tools: the 8-step cap and the nudge end the turn
            return completion(tool_calls=[tool_call(name="Encounter__search", arguments=ids, call_id=f"b{step}")])
        if request == "Any allergies?":
            return completion(content="Codeine.")
        if request == "Hold the lisinopril.":
            hold = {**ids, "medication": "lisinopril", "dose": "hold", "route": "PO", "frequency": "daily"}
            hold.pop("hadm_id")
            return completion(
                content="Lisinopril is held.",
                tool_calls=[
                    tool_call(name="MedicationRequest__create", arguments=hold, call_id="w1"),
                    tool_call(name="prepare_to_answer", arguments={}, call_id="w2"),
                ],
            )
        raise AssertionError(f"unscripted request {request!r}")


def _runeval(tmp_path, server, *args):
    common = ["--api-key-env", "B_FAKE_KEY", "--snapshot", "none", "--sessions", "all", "--processes", "1"]
    return runeval_summary(tmp_path, "--base-url", server.base_url, *common, *args)


def _api(schema):
    out = copy.deepcopy(schema)
    out["function"]["name"] = out["function"]["name"].replace(".", "__")
    return out


def _posts(server):
    return [r.json for r in server.requests if r.path.endswith("/chat/completions")]


def test_the_model_and_the_judge_get_exactly_the_release_requests(released, tmp_path, key):
    rec, records = released
    with FakeOpenAIServer(responder=Model(rec)) as server:
        summary = _runeval(tmp_path, server, "--protocol", "release", "--model", "fake-model", "--judge", "fake-judge")
        sent = _posts(server)
    model = [p for p in sent if not _is_judge(p)]
    judged = [p for p in sent if _is_judge(p)]
    record_a = records[0]
    environment = (
        "[Environment Info]\nsession_id: physassistbench_release_a\nCurrent date: 2180-07-21. Patient is a "
        f"62-year-old F\nsubject_id: {rec.subject_id}\nhadm_id: {rec.current_hadm}\n\n"
        "You are now assisting with this clinical case. The tasks will come one at a time."
    )
    opening = [
        {"role": "system", "content": release.SYSTEM_PROMPT["en"]},
        {"role": "user", "content": environment},
        {"role": "assistant", "content": release.ACKNOWLEDGEMENT["en"]},
    ]
    first = model[0]
    assert first["messages"] == [*opening, {"role": "user", "content": "What is her latest creatinine?"}]
    assert "prepare_to_answer" in opening[0]["content"] and "session_id" in opening[0]["content"]
    # The session's own schemas (API-safe names), its own prepare_to_answer (with answer_type) included: the
    # released runner's de-duplication keeps the record's (issue 33, semantics file corrections).
    stored = [_api(t) for t in record_a["tools"]]
    assert first["tools"] == stored
    assert (
        "answer_type"
        in next(t for t in stored if t["function"]["name"] == "prepare_to_answer")["function"]["parameters"][
            "properties"
        ]
    )
    assert (first["tool_choice"], first["temperature"], first["max_tokens"]) == ("auto", 0.2, 1024)
    assert all(p["tools"] == first["tools"] for p in model)  # the full set every step, nudges too

    # prepare_to_answer without text: the nudge, with the compact observation in the history.
    nudge = model[1]
    calls = [
        tool_call(
            name="Observation__search",
            arguments={
                "subject_id": rec.subject_id,
                "hadm_id": rec.current_hadm,
                "category": "laboratory",
                "code": "creatinine",
            },
            call_id="c1",
        ),
        tool_call(name="prepare_to_answer", arguments={}, call_id="c2"),
    ]
    turn0 = [
        {"role": "user", "content": "What is her latest creatinine?"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": CREATININE_TEXT},
        {"role": "tool", "tool_call_id": "c2", "content": PREPARED},
    ]
    assert nudge["messages"] == [*opening, *turn0, {"role": "user", "content": release.NUDGE["en"]}]
    assert (nudge["tool_choice"], nudge["temperature"], nudge["max_tokens"]) == ("none", 0.2, 1024)

    # Turn 1 keeps turn 0 whole (calls, results, the answer), not the nudge; the patient is replayed
    # by order (the model asked about "coumadin") with the high-literacy variant.
    answer0 = "final answer to: What is her latest creatinine?"
    second = model[2]
    assert second["messages"] == [
        *opening,
        *turn0,
        {"role": "assistant", "content": answer0},
        {"role": "user", "content": "And her warfarin?"},
    ]
    assert model[3]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "p1",
        "content": WARFARIN_FIRST["patient_responses_all_literacy"]["high"],
    }

    # Turn 2: the second gold answer of the same tool; 8 model steps, then the nudge.
    bleeding = [p for p in model if "Any bleeding with it?" in [m.get("content") for m in p["messages"]]]
    assert [p["tool_choice"] for p in bleeding] == ["auto"] * 8 + ["none"]
    assert bleeding[1]["messages"][-1]["content"] == WARFARIN_SECOND["patient_responses_all_literacy"]["high"]

    run = EvalRun.objects.get(pk=summary["run_id"])
    assert run.manifest["protocol"] == {
        "name": "release",
        "literacy": "high",
        "bounds": "release",
        "max_steps": 8,
        "temperature": 0.2,
        "max_tokens": 1024,
        "observations": "compact",
        "judge_mode": "release",
        "patient_replay": "order",
        "prompt_hash": release.PROMPT_HASH,
    }
    assert run.manifest["parameters"]["protocol"] == "release" and run.manifest["parameters"]["max_tokens"] == 1024
    assert run.manifest["judge"]["mode"] == "release" and run.manifest["judge"]["temperature"] == 0.1
    results = {(r.session_id, r.turn_index): r for r in TurnResult.objects.filter(run=run)}
    t2 = results[("physassistbench_release_a", 2)].trace
    assert t2["end_reason"] == "step_limit" and t2["n_calls"] == 8 and t2["replay_misses"] == 0
    assert results[("physassistbench_release_a", 1)].trace["replay_literacy_fallbacks"] == 0

    # The judge: the release's inputs, one call per turn, temperature 0.1.
    assert len(judged) == 5
    warfarin = next(p for p in judged if "Clinical question: And her warfarin?" in p["messages"][1]["content"])
    gold_a = record_a["answer_list"]
    assert warfarin["messages"][1]["content"] == (
        "Clinical question: And her warfarin?\n\n"
        "Conversation history:\n"
        "[USER]: What is her latest creatinine?\n"
        f"[ASSISTANT]: {record_a['messages'][1]['content']}\n\n"
        "EHR data retrieved (for verification):\n"
        f"{gold_a[1][-1]['observation']}\n\n"
        "Model response:\nShe takes warfarin 5 mg each evening and missed a dose.\n\n"
        "Rubric items:\n"
        "1. States warfarin is ordered\n2. States she takes 5 mg each evening\n3. Mentions the missed dose\n"
        "4. Does not recommend increasing the dose\n\n"
        "Score each rubric item (JSON):"
    )
    assert warfarin["messages"][0]["content"] == release_judge.ANSWER_SYSTEM["en"]
    assert (warfarin["temperature"], warfarin["max_tokens"]) == (0.1, 4000) and "tools" not in warfarin
    verdicts = results[("physassistbench_release_a", 1)].verdicts
    assert [v["passed"] for v in verdicts] == [True, False, False, False]
    assert results[("physassistbench_release_a", 1)].score == 0.25

    # Write/Update: judged on the model's write call against the gold parameters, not its text.
    write = next(p for p in judged if "Hold the lisinopril." in p["messages"][1]["content"])
    assert write["messages"][0]["content"] == release_judge.WRITE_SYSTEM["en"] and write["max_tokens"] == 2000
    text = write["messages"][1]["content"]
    assert (
        "Model's proposed write tool calls:\nTool called: MedicationRequest.create\n  medication: lisinopril\n" in text
    )
    assert "Gold standard write parameters:\nGold tool: MedicationRequest.create\n  dose: hold\n" in text
    assert f"  subject_id: {rec.subject_id}" in text.split("Model's proposed")[0]  # the gold lists every parameter
    assert "Clinical context: Lisinopril is held (order created, simulated)" in text
    wu = results[("physassistbench_release_b", 1)].trace
    assert wu["answer"] == "Lisinopril is held." and wu["end_reason"] == "prepare_to_answer"
    assert wu["writes"][0]["observation"]["status"] == "on-hold"


def test_a_chinese_release_run_uses_tools_zh_and_the_chinese_gold(released, tmp_path, key):
    _, records = released

    def responder(payload):
        if _is_judge(payload):
            n = len([line for line in payload["messages"][1]["content"].split("\n") if line[:1].isdigit()])
            return completion(content=json.dumps({"scores": [1] * n}))
        if payload["messages"][-1]["content"] == "那华法林呢？":
            return completion(
                tool_calls=[tool_call(name="patient__get_medication_adherence", arguments={}, call_id="z")]
            )
        return completion(content="好的。")

    with FakeOpenAIServer(responder=responder) as server:
        _runeval(
            tmp_path,
            server,
            "--protocol",
            "release",
            "--language",
            "zh",
            "--literacy",
            "low",
            "--model",
            "m",
            "--judge",
            "j",
            "--limit",
            "1",
        )
        sent = _posts(server)
    first = sent[0]
    assert first["messages"][0]["content"] == release.SYSTEM_PROMPT["zh"]
    assert first["messages"][1]["content"].startswith("[环境信息]\nsession_id: physassistbench_release_a\n")
    zh_tools = [_api(t) for t in records[0]["tools_zh"]]
    assert first["tools"] == zh_tools  # the record's own Chinese schemas, its prepare_to_answer included
    patient = next(p for p in sent if p["messages"][-1]["role"] == "tool")
    assert patient["messages"][-1]["content"] == WARFARIN_FIRST_ZH["patient_responses_all_literacy"]["low"]
    judge = next(p for p in sent if _is_judge(p) and "临床问题：那华法林呢？" in p["messages"][1]["content"])
    assert judge["messages"][0]["content"] == release_judge.ANSWER_SYSTEM["zh"]
    zh_gold = records[0]["answer_list_zh"][1][-1]["observation"]
    assert f"已检索的病历数据（供核对）：\n{zh_gold}\n\n" in judge["messages"][1]["content"]
    assert "1. 指出已开具华法林\n" in judge["messages"][1]["content"]


def test_resume_restores_the_protocol_and_the_whole_history(released, tmp_path, key):
    rec, _ = released
    with FakeOpenAIServer(responder=Model(rec)) as server:
        summary = _runeval(tmp_path, server, "--protocol", "release", "--model", "fake-model", "--limit", "1")
        before = [p for p in _posts(server) if "Any bleeding with it?" in [m.get("content") for m in p["messages"]]]
    run = EvalRun.objects.get(pk=summary["run_id"])
    original = TurnResult.objects.get(run=run, turn_index=2).trace
    TurnResult.objects.filter(run=run, turn_index=2).delete()
    with FakeOpenAIServer(responder=Model(rec)) as again:
        call_command(
            "runeval",
            "--resume",
            str(run.pk),
            "--base-url",
            again.base_url,
            "--api-key-env",
            "B_FAKE_KEY",
            "--processes",
            "1",
            "--quiet",
            "--output",
            str(tmp_path / "r"),
        )
        after = _posts(again)
    # The replayed turn sends exactly the requests it sent the first time: the history rebuilt from the
    # stored turns (calls and results included), the release's settings, and the patient's order
    # replay moved past the answer turn 1 was served.
    assert len(before) == 9 and after == before
    resumed = TurnResult.objects.get(run=run, turn_index=2).trace
    assert resumed["messages"] == original["messages"]
    assert (
        resumed["patient_replies"][0]["observation"]["patient_response"]
        == (WARFARIN_SECOND["patient_responses_all_literacy"]["high"])
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--protocol", "release", "--live-patient"], "--live-patient contradicts --protocol release"),
        (["--literacy", "low"], "--literacy applies to --protocol release only"),
        (["--resume", "1", "--protocol", "release"], "--resume keeps the run's protocol"),
        (["--protocol", "release", "--max-tokens", "0"], "--max-tokens must be at least 1"),
    ],
)
def test_contradictory_flags_are_refused(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("runeval", "--model", "rules:oracle", "--quiet", *args)
