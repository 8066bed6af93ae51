"""Output budget per role, ``max_completion_tokens``, permanent parse errors not retried, backoff timing.

Against the scripted server (tests/fakes/openai_server.py), which plays what real servers do: a model
that rambles until the client timeout when no limit is sent, and llama.cpp's HTTP 500 "Failed to parse
tool call arguments as JSON" for a history it cannot parse.
"""

import pytest

from core.llm import LLMClient, LLMConfigError, LLMRequestError, role_config, track_calls
from core.llm.retry import is_retryable_failure, says_unparseable
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, completion, error

ENV = {"FAKE_KEY": "sk-fake-budget-0123456789"}
ASK = [{"role": "user", "content": "Summarise the admission."}]


def _client(server, *, role="model_under_test", sleeps=None, environ=None, **settings):
    config = role_config(
        role=role,
        environ=environ or {},
        backend="openai",
        model="fake-model",
        base_url=server.base_url,
        api_key_env="FAKE_KEY",
        cache=False,
        **settings,
    )
    return LLMClient(config=config, environ=ENV, sleep=sleeps.append if sleeps is not None else lambda s: None)


@pytest.mark.parametrize(
    ("role", "expected"),
    [("model_under_test", 4096), ("judge", 2048), ("generator", 4096), ("patient", 1024), ("other_role", 2048)],
)
def test_every_role_has_an_output_budget(role, expected):
    assert role_config(role=role, environ={}).max_tokens == expected
    assert role_config(role=role, environ={}).max_tokens_field == "max_tokens"


def test_budget_from_the_environment_none_means_no_limit_and_bad_values_are_named():
    env = {
        "LLM_JUDGE_MAX_TOKENS": "300",
        "LLM_MAX_TOKENS": "none",
        "LLM_JUDGE_MAX_TOKENS_FIELD": "max_completion_tokens",
    }
    judge = role_config(role="judge", environ=env)
    assert (judge.max_tokens, judge.max_tokens_field) == (300, "max_completion_tokens")
    assert role_config(role="patient", environ=env).max_tokens is None  # LLM_MAX_TOKENS=none for every role
    assert role_config(role="judge", environ={}, max_tokens=0).max_tokens is None  # 0 = no limit
    with pytest.raises(LLMConfigError, match=r"LLM_JUDGE_MAX_TOKENS='-5' is invalid .* between 1 and 1000000"):
        role_config(role="judge", environ={"LLM_JUDGE_MAX_TOKENS": "-5"})
    with pytest.raises(LLMConfigError, match=r"LLM_JUDGE_MAX_TOKENS_FIELD='max_output' is invalid .* expected one of"):
        role_config(role="judge", environ={"LLM_JUDGE_MAX_TOKENS_FIELD": "max_output"})


def _rambling(payload) -> Scripted:
    """A model that only stops at its limit: without one it generates past the client timeout."""
    limit = payload.get("max_tokens") or payload.get("max_completion_tokens")
    if limit is None:
        return Scripted(body=completion(content="and so on " * 1000).body, delay_s=1.5)
    return completion(content="and so on " * 10, finish_reason="length", completion_tokens=limit)


def test_a_rambling_model_stops_at_the_budget_instead_of_timing_out_six_times():
    with FakeOpenAIServer(responder=_rambling) as server:
        unlimited = _client(server, max_tokens=0, timeout_s=0.3, max_retries=2)
        with pytest.raises(LLMRequestError, match="timeout"):
            unlimited.chat(messages=ASK)
        assert len(server.requests) == 3  # every retry rambles again
        server.requests.clear()
        with _client(server, timeout_s=0.3, max_retries=2) as client:
            result = client.chat(messages=ASK)
    assert len(server.requests) == 1 and server.requests[0].json["max_tokens"] == 4096
    assert result.finish_reason == "length" and result.usage.completion_tokens == 4096


def test_explicit_budget_wins_and_max_completion_tokens_is_sent_where_the_endpoint_wants_it():
    with FakeOpenAIServer(responder=lambda payload: completion(content="ok")) as server:
        with _client(server) as client:
            client.chat(messages=ASK, max_tokens=64)
        with _client(server, environ={"LLM_MODEL_UNDER_TEST_MAX_TOKENS_FIELD": "max_completion_tokens"}) as client:
            client.chat(messages=ASK)
            client.chat(messages=ASK, max_tokens=32)
            client.chat(messages=ASK, max_completion_tokens=16)
        with _client(server, max_tokens=0) as client:
            client.chat(messages=ASK)
        bodies = [r.json for r in server.requests]
    budgets = [{k: b[k] for k in ("max_tokens", "max_completion_tokens") if k in b} for b in bodies]
    assert budgets == [
        {"max_tokens": 64},
        {"max_completion_tokens": 4096},
        {"max_completion_tokens": 32},
        {"max_completion_tokens": 16},
        {},
    ]


PARSE_500 = "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] unexpected end of input"


def test_a_server_that_cannot_parse_the_request_is_not_retried():
    sleeps = []
    with FakeOpenAIServer() as server:
        server.push(error(500, PARSE_500))
        with _client(server, sleeps=sleeps, max_retries=5) as client, pytest.raises(LLMRequestError) as caught:
            client.chat(messages=ASK)
        assert len(server.requests) == 1 and sleeps == []
        # A plain 500 is still retried.
        server.push(error(500, "CUDA out of memory"), completion(content="fine"))
        with _client(server, sleeps=sleeps, max_retries=5) as client:
            assert client.chat(messages=ASK).content == "fine"
    exc = caught.value
    assert (exc.status, exc.retryable, exc.unparseable, exc.attempts) == (500, False, True, 1)
    assert "could not parse the request or the model's output" in str(exc)
    assert len(sleeps) == 1


@pytest.mark.parametrize(
    ("detail", "unparseable"),
    [
        (PARSE_500, True),
        ("Failed to parse input at pos 57: <tool_call>{", True),
        ("We could not parse the JSON body of your request.", True),
        ("Invalid JSON in tool arguments", True),
        ("Internal server error", False),
        ("slot unavailable", False),
        ("", False),
    ],
)
def test_which_messages_say_unparseable(detail, unparseable):
    assert says_unparseable(detail) is unparseable
    assert is_retryable_failure(status=500, detail=detail) is not unparseable
    assert is_retryable_failure(status=400, detail=detail) is False


def test_backoff_is_reported_apart_and_failed_calls_are_tracked():
    sleeps = []
    with FakeOpenAIServer() as server:
        server.push(
            error(429, "slow down", headers={"Retry-After": "0.25"}),
            completion(content="ok"),
            error(503, "busy", headers={"Retry-After": "0.5"}),
            error(503, "busy", headers={"Retry-After": "0.5"}),
        )
        with _client(server, sleeps=sleeps, max_retries=1) as client, track_calls() as calls:
            result = client.chat(messages=ASK)
            with pytest.raises(LLMRequestError) as caught:
                client.chat(messages=ASK)
    assert result.backoff_s == 0.25 and result.attempts == 2
    assert caught.value.backoff_s == 0.5 and caught.value.elapsed_s >= 0
    assert sleeps == [0.25, 0.5]
    assert len(calls.results) == 1 and calls.failures == 1
    assert calls.backoff_s == 0.75
    assert calls.as_dict()["calls"] == 1 and calls.as_dict()["failed_calls"] == 1
