"""Fault cases against the scripted server: each run completes and records what happened."""

import contextlib
import json
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.models import EvalRun, TurnResult
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, completion, tool_call


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("H6_FAKE_KEY", "sk-fake-123456789")
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "0")
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_TIMEOUT", "0.5")


def _runeval(tmp_path, base_url, *args, partial=False):
    """``partial``: the run must end partial, with the non-zero exit naming the pending turns."""
    expect = pytest.raises(CommandError, match=r"turns pending .* — runeval --resume")
    with expect if partial else contextlib.nullcontext():
        _call(tmp_path, base_url, *args)
    summary = json.loads((tmp_path / "summary.json").read_text())
    return summary, list(TurnResult.objects.filter(run_id=summary["run_id"]).order_by("turn_index"))


def _call(tmp_path, base_url, *args):
    call_command(
        "runeval",
        "--model",
        "fault-model",
        "--base-url",
        base_url,
        "--api-key-env",
        "H6_FAKE_KEY",
        "--sessions",
        "all",
        "--limit",
        "1",
        "--quiet",
        "--output",
        str(tmp_path),
        *args,
    )


def _run(tmp_path, responder, *args, partial=False):
    with FakeOpenAIServer(responder=responder) as server:
        return _runeval(tmp_path, server.base_url, *args, partial=partial)


def _nth(n, fault):
    """Answer plainly, except the n-th request (1-based) gets ``fault``."""
    seen = []

    def responder(payload):
        seen.append(1)
        return fault if len(seen) == n else completion(content="Creatinine 1.4 mg/dL.")

    return responder


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (Scripted(body=completion(content="late").body, delay_s=2.0), "timeout"),
        (Scripted(drop=True), "connection"),
        (Scripted(status=500, body={"error": {"message": "boom"}}), "http_500"),
        (Scripted(body="{not json"), "malformed_response"),
    ],
)
def test_endpoint_faults_are_infra_errors(sessions, tmp_path, fault, kind):
    summary, results = _run(tmp_path, _nth(2, fault), partial=True)
    assert results[0].infra_error == "" and results[0].score is not None
    assert results[1].infra_error == kind and results[1].score is None
    assert summary["errors"]["infra"] == {kind: 1}
    # Not finished: the failed turn and the two after it wait for --resume.
    assert EvalRun.objects.get(pk=summary["run_id"]).status == "partial" == summary["status"]
    assert summary["pending"] == {"turns": 3, "not_played": 2, "infra_error": 1, "expected_turns": 4}
    # Scores leave the infra error out rather than counting it as a model failure.
    assert summary["metrics"]["en"]["n_turns_scored"] == 1


def test_endpoint_going_away_mid_run_is_a_connection_error(sessions, tmp_path, monkeypatch):
    """The server stops listening after the first answer: later calls are refused (no one on the port)."""
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_TIMEOUT", "5")  # stopping the server takes up to 0.5 s
    servers: list[FakeOpenAIServer] = []

    def answer_then_go_away(payload):
        stopping = threading.Thread(target=servers[0].stop)
        stopping.start()
        stopping.join()  # the listening socket is closed before this answer goes out
        plain = completion(content="Creatinine 1.4 mg/dL.")
        return Scripted(body=plain.body, headers={"Connection": "close"})  # no kept-alive connection either

    with FakeOpenAIServer(responder=answer_then_go_away) as server:
        servers.append(server)
        summary, results = _runeval(tmp_path, server.base_url, partial=True)
    assert results[0].infra_error == "" and results[0].score is not None
    assert results[1].infra_error == "connection" and results[1].score is None
    assert "refused" in str(results[1].trace["errors"]).lower()
    assert summary["errors"]["infra"] == {"connection": 1}
    assert EvalRun.objects.get(pk=summary["run_id"]).status == "partial"


def test_unknown_tool_bad_json_empty_and_huge_answers(sessions, tmp_path):
    huge = "Creatinine 1.4 mg/dL. " + "x" * 200_000
    replies = iter(
        [
            completion(
                tool_calls=[tool_call(name="No_such_tool", arguments={}), tool_call(name="Patient_read", arguments="{")]
            ),
            completion(content=""),
            completion(content=huge),
            completion(content=""),
            completion(content="ok"),
        ]
    )
    summary, results = _run(tmp_path, lambda payload: next(replies))
    first = results[0].trace
    assert first["invalid_calls"] == 2 and first["answer"] == ""
    errors = [c["observation"]["error"] for c in first["steps"][0]["calls"]]
    assert "unknown tool" in errors[0] and "not valid JSON" in errors[1]
    assert results[1].trace["answer"] == huge and results[1].score is not None
    assert all(r.infra_error == "" for r in results)
    assert summary["errors"]["invalid_calls"] == 2
