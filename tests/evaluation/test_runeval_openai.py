"""runeval end to end through the real openai client against the scripted server (tool calls, LLM judge, faults)."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.judges.llm import PROMPT_HASH
from evaluation.models import EvalRun, TurnResult
from tests.evaluation.runeval_helpers import runeval_summary
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, completion, error, tool_call

ANSWER = "Creatinine is 1.4 mg/dL; I would not start ibuprofen."


class Script:
    """Agent: first step calls tools (one good, one bad JSON, one unknown, one patient, prepare_to_answer)."""

    def __init__(self):
        self.judge_calls = 0

    def __call__(self, payload) -> Scripted:
        if payload.get("response_format"):
            self.judge_calls += 1
            if self.judge_calls == 1:
                return completion(content="this is not json")  # the judge must re-ask
            rubric = json.loads(payload["messages"][1]["content"])["rubric"]
            verdicts = [{"idx": r["idx"], "passed": r["idx"] % 2 == 0, "reason": f"item {r['idx']}"} for r in rubric]
            return completion(content=json.dumps({"verdicts": verdicts}))
        if payload.get("tool_choice") == "none":
            return completion(content=ANSWER, prompt_tokens=100, completion_tokens=20)
        if payload["messages"][-1]["role"] == "user":
            return completion(
                tool_calls=[
                    tool_call(name="Observation__search", arguments={"code": "creatinine", "_count": 2}),
                    # the single-underscore API name of earlier versions is still understood
                    tool_call(name="Observation_search", arguments='{"code": "creatinine"'),
                    tool_call(name="Lab_lookup", arguments={}),
                    # `topic` is not in the released contract: dropped with a warning, the call still runs
                    tool_call(name="patient__get_social_history", arguments={"topic": "smoking"}),
                    tool_call(name="prepare_to_answer", arguments={}),
                ],
                prompt_tokens=50,
            )
        return completion(content=ANSWER)


def _runeval(tmp_path, server, *args):
    return runeval_summary(
        tmp_path, "--base-url", server.base_url, "--api-key-env", "H6_FAKE_KEY", "--sessions", "all", *args
    )


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("H6_FAKE_KEY", "sk-fake-123456789")


def test_end_to_end_with_tool_calls_and_llm_judge(sessions, tmp_path, key):
    script = Script()
    with FakeOpenAIServer(responder=script) as server:
        summary = _runeval(tmp_path, server, "--model", "fake-model", "--judge", "fake-judge", "--limit", "1")
        n_requests = len(server.requests)
        base_url = server.base_url
        sent = [r.json for r in server.requests if not r.json.get("response_format")]
    run = EvalRun.objects.get(pk=summary["run_id"])
    assert run.manifest["endpoint"]["base_url"] == base_url
    assert "sk-fake" not in json.dumps(run.manifest)
    assert run.manifest["judge"]["prompt_hash"] == PROMPT_HASH
    # Tools went out with API-safe names, the system prompt carries the environment.
    assert any(t["function"]["name"] == "Observation__search" for t in sent[0]["tools"])
    assert (
        sessions[0].session_id in sent[0]["messages"][0]["content"] or "session_id" in sent[0]["messages"][0]["content"]
    )
    results = list(TurnResult.objects.filter(run=run).order_by("turn_index"))
    assert len(results) == 4
    trace = results[0].trace
    assert trace["n_calls"] == 5 and trace["invalid_calls"] == 2 and trace["end_reason"] == "prepare_to_answer"
    assert trace["calls"][0]["name"] == "Observation.search"
    assert trace["patient_replies"][0]["replay"] in {"hit", "miss"}
    social = trace["steps"][0]["calls"][3]
    assert social["name"] == "patient.get_social_history" and not social["invalid"]
    assert social["warnings"] == social["observation"]["warnings"] and "'topic'" in social["warnings"][0]
    assert trace["unknown_arguments"] == 1
    assert trace["diagnostics"]["dropped_arguments"] == [
        {"tool": "patient.get_social_history", "warning": social["warnings"][0]}
    ]
    assert summary["errors"]["unknown_arguments"] == sum(r.trace["unknown_arguments"] for r in results)
    assert trace["answer"] == ANSWER and trace["usage"]["prompt_tokens"] == 150
    bad = trace["steps"][0]["calls"][1]
    assert "error" in bad["observation"] and bad["parse_error"]
    # Later turns saw the model's own earlier answer.
    second_turn_request = [r for r in sent if r["messages"][-1]["role"] == "user"][1]
    assert {"role": "assistant", "content": ANSWER} in second_turn_request["messages"]
    # LLM judge: verdicts with reasons, even items pass; the malformed first reply was re-asked.
    assert all(v["reason"].startswith("item") for v in results[0].verdicts)
    assert results[0].scored == len(results[0].verdicts) and results[0].unscored == 0
    m = summary["metrics"]["en"]
    assert 0 < m["mRS"]["all"] < 1 and m["n_items_unscored"] == 0
    assert summary["usage"]["prompt_tokens"] > 0
    # Resuming a finished run calls nothing.
    with FakeOpenAIServer(responder=script) as again:
        call_command(
            "runeval",
            "--resume",
            str(run.pk),
            "--api-key-env",
            "H6_FAKE_KEY",
            "--quiet",
            "--output",
            str(tmp_path / "r"),
            "--base-url",
            again.base_url,
        )
        assert again.requests == []
    assert n_requests > 0


def test_faults_are_recorded_and_resume_completes(sessions, tmp_path, key, monkeypatch):
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "1")
    script, seen = Script(), []

    def faulty(payload):
        seen.append(1)
        if len(seen) in (3, 4):  # turn 1's first call and its retry
            return error(500, "boom")
        return script(payload)

    with FakeOpenAIServer(responder=faulty) as server:
        server.push(error(429, "slow down", headers={"Retry-After": "0"}))  # retried, then fine
        with pytest.raises(CommandError, match=r"3 turns pending .* — runeval --resume \d+"):
            _runeval(tmp_path, server, "--model", "fake-model", "--judge", "rules", "--limit", "1")
        summary = json.loads((tmp_path / "summary.json").read_text())
        run = EvalRun.objects.get(pk=summary["run_id"])
        assert run.status == "partial"
        first = TurnResult.objects.get(run=run, turn_index=0)
        assert first.trace["steps"][0]["reply"]["attempts"] == 2 and not first.infra_error
        errored = TurnResult.objects.get(run=run, turn_index=1)
        assert errored.infra_error == "http_500" and errored.score is None
        assert summary["errors"]["infra"] == {"http_500": 1}
        assert TurnResult.objects.filter(run=run).count() == 2  # the rest of the session waits for --resume
        resumed = _runeval(tmp_path / "r", server, "--resume", str(run.pk))
    assert resumed["errors"]["infra_total"] == 0 and resumed["status"] == "finished"
    assert resumed["pending"]["turns"] == 0
    assert TurnResult.objects.filter(run=run).count() == 4
    assert TurnResult.objects.get(run=run, turn_index=0).pk == first.pk  # finished turns were kept


def test_step_limit_and_empty_answer(sessions, tmp_path, key):
    def looping(payload):
        if payload.get("tool_choice") == "none":
            return completion(content="")
        return completion(tool_calls=[tool_call(name="Patient_read", arguments={}) for _ in range(3)])

    with FakeOpenAIServer(responder=looping) as server:
        _runeval(tmp_path, server, "--model", "loop-model", "--max-steps", "4", "--limit", "1")
    result = TurnResult.objects.filter(run__model="loop-model", turn_index=0).get()
    assert result.trace["end_reason"] == "step_limit" and result.trace["n_calls"] == 4
    assert result.trace["answer"] == "" and result.infra_error == ""
    skipped = [c for s in result.trace["steps"] for c in s["calls"] if c.get("skipped")]
    assert len(skipped) == 2


def test_trials_give_pass_hat_k_and_flips(sessions, tmp_path, key):
    """Three trials of a model that gives the gold answer on the 1st and 3rd try of each question only."""
    from scenarios.models import Turn

    gold = {t.request_implicit_en: t.answer_en for t in Turn.objects.filter(session__in=sessions)}
    tries = {}

    def flaky(payload):
        if payload.get("tool_choice") == "none" or payload["messages"][-1]["role"] == "tool":
            return completion(content="no idea")
        request = payload["messages"][-1]["content"]
        tries[request] = tries.get(request, 0) + 1
        return completion(content=gold[request] if tries[request] != 2 else "no idea")

    with FakeOpenAIServer(responder=flaky) as server:
        summary = _runeval(tmp_path, server, "--model", "flaky-model", "--trials", "3", "--limit", "1")
        # Each trial reached the endpoint (the cache is salted per trial).
        assert len(server.requests) == 3 * 4
    m = summary["metrics"]["en"]
    assert set(m["pass_hat_k"]) == {"1", "2", "3"}
    assert m["pass_hat_k"]["3"] <= m["pass_hat_k"]["2"] <= m["pass_hat_k"]["1"]
    assert m["flip_share"] is not None and m["flip_share"] > 0
