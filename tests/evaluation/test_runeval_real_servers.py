"""runeval against what real OpenAI-compatible servers do (issue 15), played by the scripted fake.

- a tool call cut off at the output limit, then a server (llama.cpp) that answers HTTP 500 "Failed to
  parse tool call arguments as JSON" to any history that carries it;
- a server that cannot parse the model's own output (permanent, the model's failure);
- pending turns: a partial run, its exit, summary, progress bar and leaderboard;
- preflight against GET /v1/models, the manifest's server and budgets, the judge's usage, --no-cache;
- retry backoff apart from harness time; a resumed run's active time; a run played twice at once.
"""

import io
import json
import os
import socket
import subprocess
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from evaluation.agent import ARGUMENTS_PLACEHOLDER
from evaluation.models import EvalRun, TurnResult
from tests.annotations.conftest import make_user
from tests.fakes.openai_server import FakeOpenAIServer, completion, error, tool_call

ANSWER = "Creatinine is 1.4 mg/dL."
TRUNCATED = '{"code": "creatinine", "date_fr'
PARSE_500 = "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] unexpected end of input"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("D_FAKE_KEY", "sk-fake-123456789")


def _call(server, tmp_path, *args, stderr=None):
    call_command(
        "runeval",
        "--base-url",
        server.base_url,
        "--api-key-env",
        "D_FAKE_KEY",
        "--sessions",
        "all",
        "--output",
        str(tmp_path),
        *args,
        **({"stderr": stderr} if stderr is not None else {}),
    )


def _runeval(server, tmp_path, *args, partial=False, stderr=None):
    """Summary of the run; ``partial``: runeval must exit non-zero naming the pending turns."""
    if partial:
        with pytest.raises(CommandError, match=r"turns pending .* — runeval --resume \d+") as caught:
            _call(server, tmp_path, *args, stderr=stderr)
        summary = json.loads((tmp_path / "summary.json").read_text())
        return summary, str(caught.value)
    _call(server, tmp_path, *args, stderr=stderr)
    return json.loads((tmp_path / "summary.json").read_text()), ""


def _broken_history(payload) -> bool:
    for message in payload.get("messages") or []:
        for call in message.get("tool_calls") or []:
            try:
                json.loads(call["function"]["arguments"])
            except ValueError:
                return True
    return False


def llama_like(payload):
    """A model whose first tool call of every turn is cut at the output limit; the server 500s on a
    history it cannot parse, as llama-server --jinja does."""
    if _broken_history(payload):
        return error(500, PARSE_500)
    if payload.get("tool_choice") == "none":
        return completion(content=ANSWER)
    if payload["messages"][-1]["role"] == "user":
        cut = tool_call(name="Observation__search", arguments=TRUNCATED)
        return completion(tool_calls=[cut], finish_reason="length", completion_tokens=64)
    return completion(tool_calls=[tool_call(name="prepare_to_answer", arguments={})])


def test_truncated_tool_call_goes_back_as_a_placeholder_and_the_run_finishes(sessions, tmp_path):
    with FakeOpenAIServer(responder=llama_like) as server:
        summary, _ = _runeval(server, tmp_path, "--model", "fake-model", "--limit", "1", "--quiet")
        sent = [r.json for r in server.requests]
    assert not any(_broken_history(body) for body in sent)  # nothing the server cannot parse was sent
    # The request after the cut call carries the placeholder, not the broken text.
    after = next(b for b in sent if b["messages"][-1]["role"] == "tool")
    assert after["messages"][-2]["tool_calls"][0]["function"]["arguments"] == ARGUMENTS_PLACEHOLDER
    assert "not valid JSON" in after["messages"][-1]["content"]  # the model is told what was wrong
    run = EvalRun.objects.get(pk=summary["run_id"])
    results = list(TurnResult.objects.filter(run=run).order_by("turn_index"))
    assert run.status == "finished" and len(results) == 4
    assert all(r.infra_error == "" and r.score is not None for r in results)
    trace = results[0].trace
    cut = trace["steps"][0]["calls"][0]
    assert cut["arguments_raw"] == TRUNCATED and cut["parse_error"] and cut["invalid"]  # the raw text stays
    assert trace["steps"][0]["reply"]["finish_reason"] == "length"
    assert trace["truncations"] == 1 and trace["end_reason"] == "prepare_to_answer"
    assert summary["errors"]["truncations"] == 4 and summary["errors"]["truncated_turns"] == 4
    assert summary["errors"]["infra_total"] == 0 and summary["pending"]["turns"] == 0


def test_output_the_server_cannot_parse_is_the_models_failure_not_infrastructure(sessions, tmp_path):
    seen = []

    def responder(payload):
        seen.append(payload)
        if sum(m["role"] == "user" for m in payload["messages"]) == 2:  # turn 1: every call fails to parse
            return error(500, 'Failed to parse input at pos 12: <tool_call>{"name": "Observation.search')
        return completion(content=ANSWER)

    with FakeOpenAIServer(responder=responder) as server:
        summary, _ = _runeval(server, tmp_path, "--model", "fake-model", "--limit", "1", "--quiet")
    turn_1 = [p for p in seen if sum(m["role"] == "user" for m in p["messages"]) == 2]
    assert len(turn_1) == 1  # not retried (LLM_MODEL_UNDER_TEST_MAX_RETRIES is 5)
    run = EvalRun.objects.get(pk=summary["run_id"])
    failed = TurnResult.objects.get(run=run, turn_index=1)
    assert failed.infra_error == "" and failed.score is not None  # scored: the model's failure
    assert failed.trace["end_reason"] == "model_error" and failed.trace["model_errors"] == 1
    assert failed.trace["steps"][0]["reply"]["error"].startswith("LLM role 'model_under_test'")
    assert run.status == "finished" and TurnResult.objects.filter(run=run).count() == 4
    assert summary["errors"]["model_errors"] == 1 and summary["errors"]["infra_total"] == 0


def test_unplayed_turns_make_a_partial_run_everywhere_until_resumed(sessions, tmp_path, client, monkeypatch):
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "0")
    calls = []

    def responder(payload):
        calls.append(1)
        return error(500, "boom") if len(calls) == 2 else completion(content=ANSWER)

    bar = io.StringIO()
    with FakeOpenAIServer(responder=responder) as server:
        summary, message = _runeval(
            server, tmp_path / "a", "--model", "fake-model", "--limit", "1", partial=True, stderr=bar
        )
        run = EvalRun.objects.get(pk=summary["run_id"])
        assert message == (
            f"run {run.pk} is partial: 3 turns pending (2 not played, 1 ended with an infrastructure error) "
            f"— runeval --resume {run.pk}"
        )
        assert run.status == "partial" == summary["status"]
        assert summary["pending"] == {"turns": 3, "not_played": 2, "infra_error": 1, "expected_turns": 4}
        assert "2/4" in bar.getvalue() and "4/4" not in bar.getvalue()  # the bar claims only played turns
        client.force_login(make_user("d_viewer", "adjudicator"))
        board = client.get(reverse("evaluation:leaderboard")).content.decode()
        assert f'data-run="{run.pk}"' in board and 'data-status="partial"' in board
        page = client.get(reverse("evaluation:run", args=[run.pk])).content.decode()
        assert 'id="pending"' in page and f"runeval --resume {run.pk}" in page
        csv = client.get(reverse("evaluation:leaderboard_download", args=["csv"])).content.decode()
        assert csv.splitlines()[0].endswith(",status,pending_turns") and csv.splitlines()[1].endswith(",partial,3")
        resumed, _ = _runeval(server, tmp_path / "b", "--resume", str(run.pk), "--quiet")
    assert resumed["status"] == "finished" and resumed["pending"]["turns"] == 0
    assert 'data-status="partial"' not in client.get(reverse("evaluation:leaderboard")).content.decode()


def test_preflight_refuses_a_model_the_endpoint_does_not_serve(sessions, tmp_path):
    before = EvalRun.objects.count()
    with FakeOpenAIServer(models=["qwen2.5-7b-instruct", "llama-3.1-8b"]) as server:
        with pytest.raises(CommandError, match=r"model 'fake-model' is not served .* it serves: llama-3.1-8b, qwen2.5"):
            _call(server, tmp_path, "--model", "fake-model", "--limit", "1", "--quiet")
        assert server.requests == []
    assert EvalRun.objects.count() == before  # nothing was created


def test_a_server_whose_chat_template_renders_no_tools_is_refused(sessions, tmp_path):
    # llama.cpp serving a model whose template has no tool support drops the tool list from the prompt silently.
    props = {"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}", "model_path": "smol.gguf"}
    before = EvalRun.objects.count()
    caps = {"supports_tools": False, "supports_tool_calls": False}
    with FakeOpenAIServer(models=["smol"], props={**props, "chat_template_caps": caps}) as server:
        with pytest.raises(CommandError, match=r"does not render tools .*supports_tools = false.*--chat-template-file"):
            _call(server, tmp_path, "--model", "smol", "--limit", "1", "--quiet")
        assert server.requests == []
    assert EvalRun.objects.count() == before
    caps = {"supports_tools": True, "supports_tool_calls": True}
    with FakeOpenAIServer(models=["smol"], props={**props, "chat_template_caps": caps}, responder=model_and_judge) as s:
        summary, _ = _runeval(s, tmp_path / "ok", "--model", "smol", "--limit", "1", "--quiet")
    assert summary["status"] == "finished"
    assert summary["manifest"]["llm"]["model_under_test"]["server"]["supports_tools"] is True


def model_and_judge(payload):
    """One tool step and an answer; as the judge, a verdict per rubric item."""
    if payload.get("response_format"):
        rubric = json.loads(payload["messages"][1]["content"])["rubric"]
        verdicts = [{"idx": r["idx"], "passed": True, "reason": "ok"} for r in rubric]
        return completion(content=json.dumps({"verdicts": verdicts}))
    if payload.get("tool_choice") == "none":
        return completion(content=ANSWER)
    if payload["messages"][-1]["role"] == "user":
        calls = [tool_call(name="Observation__search", arguments={"code": "creatinine"})]
        return completion(tool_calls=[*calls, tool_call(name="prepare_to_answer", arguments={})])
    return completion(content=ANSWER)


def test_manifest_keeps_server_and_budgets_judge_usage_is_summed_and_no_cache_asks_again(sessions, tmp_path):
    served = [{"id": "fake-model", "owned_by": "llamacpp", "meta": {"n_params": 123}}]
    args = ("--model", "fake-model", "--judge", "fake-model", "--judge-max-tokens", "512", "--limit", "1", "--quiet")
    with FakeOpenAIServer(responder=model_and_judge, models=served, props={"chat_template": "{{ tools }}"}) as server:
        first, _ = _runeval(server, tmp_path / "a", *args)
        sent = [r.json for r in server.requests]
        server.requests.clear()
        again, _ = _runeval(server, tmp_path / "b", *args)
        assert server.requests == []  # same server, same requests: every answer from the cache
        fresh, _ = _runeval(server, tmp_path / "c", *args, "--no-cache")
        assert len(server.requests) == len(sent)
    llm = first["manifest"]["llm"]
    model, judge = llm["model_under_test"], llm["judge"]
    assert model["server"]["models"] == ["fake-model"] and len(model["server"]["fingerprint"]) == 64
    assert model["server"]["chat_template_sha256"] and model["max_tokens"] == 4096 and model["cache"] is True
    assert judge["max_tokens"] == 512
    assert {b["max_tokens"] for b in sent if b.get("response_format")} == {512}
    assert {b["max_tokens"] for b in sent if not b.get("response_format")} == {4096}
    usage = first["usage"]["judge"]
    judge_calls = sum(1 for b in sent if b.get("response_format"))
    assert usage["calls"] == judge_calls > 0 and usage["prompt_tokens"] == 10 * judge_calls
    assert usage["cost_usd"] is None and first["usage"]["total_cost_usd"] is None  # no price for fake-model
    assert again["usage"]["judge"]["cache_hits"] == judge_calls
    assert fresh["manifest"]["llm"]["model_under_test"]["cache"] is False


def test_backoff_is_apart_from_harness_time(sessions, tmp_path):
    with FakeOpenAIServer(responder=lambda payload: completion(content=ANSWER)) as server:
        server.push(error(429, "slow down", headers={"Retry-After": "0.2"}))
        summary, _ = _runeval(server, tmp_path, "--model", "fake-model", "--limit", "1", "--quiet")
    first = TurnResult.objects.get(run_id=summary["run_id"], turn_index=0).trace["timing"]
    assert first["backoff_s"] == 0.2
    assert set(first) >= {"wall_s", "tools_s", "model_s", "backoff_s", "harness_s"}
    assert summary["usage"]["backoff_s"] == 0.2


def test_a_resumed_run_reports_active_time_not_the_gap(sessions, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "0")
    calls = []

    def responder(payload):
        calls.append(1)
        return error(500, "boom") if len(calls) == 2 else completion(content=ANSWER)

    with FakeOpenAIServer(responder=responder) as server:
        summary, _ = _runeval(server, tmp_path / "a", "--model", "fake-model", "--limit", "1", "--quiet", partial=True)
        EvalRun.objects.filter(pk=summary["run_id"]).update(started_at=timezone.now() - timedelta(hours=1))
        resumed, _ = _runeval(server, tmp_path / "b", "--resume", str(summary["run_id"]), "--quiet")
    run = EvalRun.objects.get(pk=summary["run_id"])
    assert resumed["usage"]["elapsed_s"] >= 3600  # an hour between the start and the resume's end
    assert 0 < resumed["usage"]["wall_s"] == round(run.active_s, 3) < 3600  # the gap is not counted


def _partial_run(server, tmp_path):
    calls = []

    def responder(payload):
        calls.append(1)
        return error(500, "boom") if len(calls) == 2 else completion(content=ANSWER)

    server.responder = responder
    summary, _ = _runeval(server, tmp_path, "--model", "fake-model", "--limit", "1", "--quiet", partial=True)
    server.responder = lambda payload: completion(content=ANSWER)
    return EvalRun.objects.get(pk=summary["run_id"])


def test_a_run_being_played_cannot_be_resumed_again(sessions, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "0")
    with FakeOpenAIServer() as server:
        run = _partial_run(server, tmp_path / "a")
        stored = TurnResult.objects.filter(run=run).count()
        # Another live process of this host holds the lease (this test's own pid, another token).
        holder = f"{socket.gethostname()}:{os.getpid()}:elsewhere"
        EvalRun.objects.filter(pk=run.pk).update(lease_owner=holder, lease_until=timezone.now() + timedelta(minutes=1))
        server.requests.clear()
        with pytest.raises(CommandError, match=rf"run {run.pk} is being played by process {os.getpid()} on "):
            _call(server, tmp_path / "b", "--resume", str(run.pk), "--quiet")
        assert server.requests == [] and TurnResult.objects.filter(run=run).count() == stored
        assert EvalRun.objects.get(pk=run.pk).status == "partial"
        # Its holder was killed (-9): the lease is stale at once, whatever its expiry says.
        dead = subprocess.Popen(["true"])
        dead.wait()
        EvalRun.objects.filter(pk=run.pk).update(lease_owner=f"{socket.gethostname()}:{dead.pid}:gone")
        resumed, _ = _runeval(server, tmp_path / "c", "--resume", str(run.pk), "--quiet")
    assert resumed["status"] == "finished"
    after = EvalRun.objects.get(pk=run.pk)
    assert (after.lease_owner, after.lease_until) == ("", None)  # released at the end


def test_resume_keeps_the_judge_budget_and_a_new_one_can_be_given(sessions, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "0")
    calls = []

    def responder(payload):
        if not payload.get("response_format"):
            calls.append(1)
            if len(calls) == 4:  # in turn 1: the run ends partial
                return error(500, "boom")
        return model_and_judge(payload)

    args = ("--model", "fake-model", "--judge", "fake-judge", "--judge-max-tokens", "300", "--limit", "1", "--quiet")
    with FakeOpenAIServer(responder=responder) as server:
        summary, _ = _runeval(server, tmp_path / "a", *args, partial=True)
        server.requests.clear()
        _runeval(server, tmp_path / "b", "--resume", str(summary["run_id"]), "--quiet")
        judged = {r.json["max_tokens"] for r in server.requests if r.json.get("response_format")}
    assert judged == {300}
    run = EvalRun.objects.get(pk=summary["run_id"])
    assert run.manifest["llm"]["judge"]["max_tokens"] == 300 and run.status == "finished"
