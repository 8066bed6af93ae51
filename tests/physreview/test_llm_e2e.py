"""End to end: the real client and the SDK's default HTTP transport against a scripted server on 127.0.0.1."""

import pytest

from core.llm import LLMRequestError, LLMResponseError, UsageAccumulator, get_client
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, completion, error, tool_call

KEY = "sk-test-E2E-0123456789abcdef"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Observation.search",
            "description": "Search laboratory results",
            "parameters": {
                "type": "object",
                "properties": {"category": {"type": "string"}, "code": {"type": "string"}},
                "required": ["category"],
            },
        },
    }
]
ASK = [{"role": "user", "content": "What was the last creatinine?"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


def _client(*, base_url, sleeps, accumulator=None, **extra):
    env = {
        "LLM_GENERATOR_BACKEND": "openai",
        "LLM_GENERATOR_MODEL": "gpt-4o-mini",
        "LLM_GENERATOR_BASE_URL": base_url,
        "LLM_GENERATOR_TIMEOUT": "0.5",
        "LLM_GENERATOR_MAX_RETRIES": "2",
        "OPENAI_API_KEY": KEY,
        **extra,
    }
    return get_client(role="generator", environ=env, sleep=sleeps.append, accumulator=accumulator)


@pytest.mark.django_db
def test_scripted_session_over_real_http(server):
    sleeps: list[float] = []
    accumulator = UsageAccumulator()
    server.push(
        # 1: rate limited, then a tool call
        error(429, "Rate limit reached for requests", headers={"Retry-After": "1"}),
        completion(tool_calls=[tool_call(name="Observation__search", arguments={"category": "laboratory"})]),
        # 2: the first reply is slower than the client timeout, the retry answers
        completion(content="too late", delay_s=1.5),
        completion(content="Creatinine was 1.4 mg/dL.", prompt_tokens=200, completion_tokens=20),
        # 3: malformed tool-call JSON is reported to the caller, not raised
        completion(tool_calls=[tool_call(name="Observation__search", arguments='{"category": "laboratory"')]),
        # 4: a dropped connection, then a server error, then success
        Scripted(drop=True),
        error(502, "bad gateway"),
        completion(content="third time lucky"),
    )
    with _client(base_url=server.base_url, sleeps=sleeps, accumulator=accumulator) as client:
        first = client.chat(messages=ASK, tools=TOOLS, tool_choice="auto")
        second = client.chat(messages=[*ASK, {"role": "user", "content": "Answer in words."}])
        third = client.chat(messages=ASK, tools=TOOLS, temperature=1.0)
        fourth = client.chat(messages=[{"role": "user", "content": "again"}])
        again = client.chat(messages=ASK, tools=TOOLS, tool_choice="auto")  # served from the cache

    assert first.attempts == 2
    assert sleeps[0] == 1.0  # the server's Retry-After
    (call,) = first.tool_calls
    assert (call.name, call.arguments) == ("Observation.search", {"category": "laboratory"})

    assert (second.content, second.attempts) == ("Creatinine was 1.4 mg/dL.", 2)
    assert second.cost_usd == pytest.approx((200 * 0.15 + 20 * 0.6) / 1e6)

    (broken,) = third.tool_calls
    assert broken.arguments is None and "not valid JSON" in broken.parse_error

    assert (fourth.content, fourth.attempts) == ("third time lucky", 3)

    assert again.cached and again.tool_calls == first.tool_calls
    assert server.pending == 0
    assert len(server.requests) == 2 + 2 + 1 + 3
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    assert all(r.path == "/v1/chat/completions" for r in server.requests)
    assert server.requests[0].json["tools"][0]["function"]["name"] == "Observation__search"
    assert server.requests[0].json["model"] == "gpt-4o-mini"

    totals = accumulator.totals()
    assert (totals.calls, totals.cache_hits, totals.attempts) == (5, 1, 2 + 2 + 1 + 3)


def test_unreachable_endpoint_and_non_retryable_errors(server):
    sleeps: list[float] = []
    server.push(error(400, "Unsupported parameter: 'max_tokens'"))
    with _client(base_url=server.base_url, sleeps=sleeps, LLM_GENERATOR_CACHE="false") as client:
        with pytest.raises(LLMRequestError, match=r"HTTP 400 Bad Request: Unsupported parameter: 'max_tokens'"):
            client.chat(messages=ASK, max_tokens=10)
        # Script exhausted: the fake answers 418, which is not retried either.
        with pytest.raises(LLMRequestError, match="HTTP 418"):
            client.chat(messages=ASK)
    assert sleeps == []

    base_url = server.base_url
    server.stop()
    with (
        _client(base_url=base_url, sleeps=sleeps, LLM_GENERATOR_CACHE="0") as client,
        pytest.raises(LLMRequestError, match="connection error: Connection refused; gave up after 3 attempt") as caught,
    ):
        client.chat(messages=ASK)
    assert caught.value.status is None
    assert len(sleeps) == 2


def test_non_json_success_body(server):
    server.push(Scripted(body="this is not json"))
    with (
        _client(base_url=server.base_url, sleeps=[], LLM_GENERATOR_CACHE="false") as client,
        pytest.raises(LLMResponseError, match="not a JSON object"),
    ):
        client.chat(messages=ASK)
