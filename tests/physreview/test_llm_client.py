"""The LLM client against an in-process mock transport: results, retries, errors, cache, limits.

openai 3.x sends through ``httpx2``; a ``httpx2.MockTransport`` handler plays the endpoint.
"""

import json
import logging
import threading
import time

import httpx2
import pytest

from core.llm import (
    LLMClient,
    LLMRequestError,
    LLMResponseError,
    UsageAccumulator,
    role_config,
)
from core.llm.prices import ModelPrice, PriceTable
from core.models import LLMCacheEntry
from tests.fakes.openai_server import completion, error, tool_call

KEY = "sk-test-CLIENT-0123456789abcdef"
BASE_URL = "http://llm.test/v1"
PRICES = PriceTable(prices={"priced-model": ModelPrice(input=2.0, output=8.0)}, source="test")
MESSAGES = [{"role": "user", "content": "Latest creatinine? 最近的肌酐?"}]


def make_client(handler, *, sleeps=None, accumulator=None, **settings):
    settings = {"base_url": BASE_URL, "model": "priced-model", "max_retries": 3, "cache": False, **settings}
    config = role_config(role="generator", environ={}, backend="openai", **settings)
    return LLMClient(
        config=config,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        prices=PRICES,
        accumulator=accumulator,
        sleep=(sleeps.append if sleeps is not None else lambda s: None),
        environ={"OPENAI_API_KEY": KEY},
    )


class Script:
    """A handler replaying scripted replies in order; records the requests it saw."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request)
        body = reply.body if isinstance(reply.body, str | bytes) else json.dumps(reply.body)
        return httpx2.Response(reply.status, headers=reply.headers, content=body)

    @property
    def bodies(self):
        return [json.loads(r.content) for r in self.requests]


def test_success_reports_content_usage_cost_and_hash():
    script = Script(completion(content="Creatinine 1.2 mg/dL", prompt_tokens=1000, completion_tokens=500))
    with make_client(script, temperature=0.3) as client:
        result = client.chat(messages=MESSAGES, max_tokens=200, reasoning_effort="low", seed=7)
    assert result.content == "Creatinine 1.2 mg/dL"
    assert result.finish_reason == "stop"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.total_tokens) == (1000, 500, 1500)
    assert result.cost_usd == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1_000_000)
    assert result.original_cost_usd == result.cost_usd
    assert (result.cached, result.attempts, result.role, result.model) == (False, 1, "generator", "priced-model")
    assert len(result.request_hash) == 64
    assert result.latency_s >= 0
    assert result.tool_calls == ()
    sent = script.bodies[0]
    assert sent["model"] == "priced-model"
    assert sent["messages"] == MESSAGES
    assert (sent["temperature"], sent["max_tokens"], sent["reasoning_effort"], sent["seed"]) == (0.3, 200, "low", 7)
    assert "tools" not in sent
    assert script.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert str(script.requests[0].url) == f"{BASE_URL}/chat/completions"


def test_unknown_model_cost_is_unknown_not_zero():
    with make_client(Script(completion(content="ok")), model="local-llama") as client:
        result = client.chat(messages=MESSAGES)
    assert result.usage.total_tokens == 15
    assert result.cost_usd is None


def test_tool_calls_are_parsed_and_names_mapped_back():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "Observation.search",
                "description": "Lab results",
                "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
            },
        },
        {"type": "function", "function": {"name": "patient.get_pain_assessment", "parameters": {"type": "object"}}},
    ]
    history = [
        *MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call(name="Observation.search", arguments={"code": "50912"}, call_id="c0")],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "{}"},
    ]
    reply = completion(
        tool_calls=[
            tool_call(name="Observation__search", arguments={"code": "50912", "_count": 3}, call_id="c1"),
            tool_call(name="patient__get_pain_assessment", arguments="{}", call_id="c2"),
        ]
    )
    script = Script(reply)
    with make_client(script) as client:
        result = client.chat(
            messages=history,
            tools=tools,
            tool_choice={"type": "function", "function": {"name": "Observation.search"}},
        )
    assert result.finish_reason == "tool_calls"
    first, second = result.tool_calls
    assert (first.id, first.name, first.api_name) == ("c1", "Observation.search", "Observation__search")
    assert first.arguments == {"code": "50912", "_count": 3}
    assert first.parse_error is None
    assert (second.name, second.arguments) == ("patient.get_pain_assessment", {})
    assert result.tool_calls_ok
    sent = script.bodies[0]
    assert [t["function"]["name"] for t in sent["tools"]] == ["Observation__search", "patient__get_pain_assessment"]
    assert sent["tool_choice"]["function"]["name"] == "Observation__search"
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == "Observation__search"
    # The caller's own structures are not modified.
    assert tools[0]["function"]["name"] == "Observation.search"
    assert history[1]["tool_calls"][0]["function"]["name"] == "Observation.search"


def test_malformed_tool_call_json_is_reported_not_raised():
    reply = completion(
        tool_calls=[
            tool_call(name="Observation__search", arguments='{"code": "50912",', call_id="bad"),
            tool_call(name="Observation__search", arguments="[1, 2]", call_id="list"),
            tool_call(name="Invented_tool", arguments={"x": 1}, call_id="ok"),
        ]
    )
    tools = [{"type": "function", "function": {"name": "Observation.search", "parameters": {"type": "object"}}}]
    with make_client(Script(reply)) as client:
        result = client.chat(messages=MESSAGES, tools=tools)
    bad, listed, invented = result.tool_calls
    assert bad.arguments is None
    assert bad.arguments_raw == '{"code": "50912",'
    assert "not valid JSON" in bad.parse_error
    assert listed.arguments is None and "not an object" in listed.parse_error
    assert (invented.name, invented.arguments, invented.parse_error) == ("Invented_tool", {"x": 1}, None)
    assert not result.tool_calls_ok


def test_colliding_tool_names_are_rejected():
    tools = [
        {"type": "function", "function": {"name": "a.b", "parameters": {}}},
        {"type": "function", "function": {"name": "a__b", "parameters": {}}},  # the release maps '.' to '__'
    ]
    with make_client(Script()) as client, pytest.raises(ValueError, match="both map to the API name 'a__b'"):
        client.chat(messages=MESSAGES, tools=tools)


def test_429_honours_retry_after_then_succeeds():
    sleeps: list[float] = []
    script = Script(error(429, "Rate limit reached", headers={"Retry-After": "7"}), completion(content="ok"))
    with make_client(script, sleeps=sleeps) as client:
        result = client.chat(messages=MESSAGES)
    assert result.content == "ok"
    assert result.attempts == 2
    assert sleeps == [7.0]


def test_retry_after_is_capped():
    sleeps: list[float] = []
    script = Script(error(429, "later", headers={"Retry-After": "86400"}), completion(content="ok"))
    with make_client(script, sleeps=sleeps) as client:
        client.chat(messages=MESSAGES)
    assert sleeps == [120.0]


def test_500_then_success_backs_off_with_jitter():
    sleeps: list[float] = []
    script = Script(error(500, "boom"), error(503, "busy"), completion(content="ok"))
    with make_client(script, sleeps=sleeps) as client:
        result = client.chat(messages=MESSAGES)
    assert (result.content, result.attempts) == ("ok", 3)
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 1.0  # full jitter in [0, base]
    assert 0 <= sleeps[1] <= 2.0  # then [0, 2·base]
    assert len(script.requests) == 3


def test_timeout_then_success():
    def timeout(request):
        raise httpx2.ReadTimeout("read timed out", request=request)

    sleeps: list[float] = []
    with make_client(Script(timeout, completion(content="ok")), sleeps=sleeps) as client:
        result = client.chat(messages=MESSAGES)
    assert (result.content, result.attempts, len(sleeps)) == ("ok", 2, 1)


def test_connection_errors_exhaust_retries_with_a_clear_error():
    def refused(request):
        raise httpx2.ConnectError("connection refused", request=request)

    sleeps: list[float] = []
    script = Script(*([refused] * 3))
    with make_client(script, sleeps=sleeps, max_retries=2) as client, pytest.raises(LLMRequestError) as caught:
        client.chat(messages=MESSAGES)
    err = caught.value
    assert (err.status, err.attempts, err.retryable) == (None, 3, True)
    assert err.endpoint == f"{BASE_URL}/chat/completions"
    message = str(err)
    assert "role 'generator'" in message
    assert f"{BASE_URL}/chat/completions" in message
    assert "connection error" in message
    assert "gave up after 3 attempts (LLM_GENERATOR_MAX_RETRIES=2)" in message
    assert len(sleeps) == 2
    assert err.__cause__ is None and err.__context__ is None


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_is_not_retried(status):
    sleeps: list[float] = []
    script = Script(error(status, "Invalid parameter 'tools'"), completion(content="never"))
    with make_client(script, sleeps=sleeps) as client, pytest.raises(LLMRequestError) as caught:
        client.chat(messages=MESSAGES)
    err = caught.value
    assert (err.status, err.attempts, err.retryable) == (status, 1, False)
    assert f"HTTP {status}" in str(err)
    assert "Invalid parameter 'tools'" in str(err)
    assert "not retried" in str(err)
    assert sleeps == []
    assert len(script.requests) == 1


def test_malformed_body_is_a_response_error():
    script = Script(
        lambda request: httpx2.Response(200, content=b"<html>proxy error</html>"),
        lambda request: httpx2.Response(200, json={"id": "x", "choices": []}),
    )
    with make_client(script) as client:
        with pytest.raises(LLMResponseError, match="not a JSON object"):
            client.chat(messages=MESSAGES)
        with pytest.raises(LLMResponseError, match="malformed chat completion: response has no choices"):
            client.chat(messages=MESSAGES)


def test_key_never_appears_in_errors_logs_or_reprs(caplog):
    caplog.set_level(logging.DEBUG)
    leaky = f"Incorrect API key provided: {KEY}. Authorization: Bearer {KEY}"
    script = Script(
        error(429, leaky, headers={"Retry-After": "0"}),
        completion(content="ok"),
        error(401, leaky),
    )
    with make_client(script) as client:
        client.chat(messages=MESSAGES)
        with pytest.raises(LLMRequestError) as caught:
            client.chat(messages=MESSAGES, temperature=1.0)
        texts = [str(caught.value), repr(caught.value), repr(vars(caught.value)), repr(client), repr(client.config)]
    assert "Incorrect API key provided: [redacted]" in str(caught.value)
    assert script.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was really sent
    assert caplog.records, "retries are logged"
    for text in [*texts, caplog.text]:
        assert KEY not in text
        assert KEY[-12:] not in text
    assert caught.value.__context__ is None


def test_accumulator_sums_calls_from_threads():
    accumulator = UsageAccumulator()
    reply = completion(content="x", prompt_tokens=100, completion_tokens=10).body
    with make_client(lambda request: httpx2.Response(200, json=reply)) as client:
        client.accumulator = accumulator
        threads = [threading.Thread(target=client.chat, kwargs={"messages": MESSAGES}) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    totals = accumulator.totals()
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens, totals.total_tokens) == (10, 1000, 100, 1100)
    assert totals.cost_usd == pytest.approx(10 * (100 * 2.0 + 10 * 8.0) / 1_000_000)
    assert totals.attempts == 10


def test_concurrency_limit_is_respected_across_threads():
    lock = threading.Lock()
    state = {"in_flight": 0, "peak": 0, "calls": 0}

    def slow(request):
        with lock:
            state["in_flight"] += 1
            state["calls"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
        time.sleep(0.05)
        with lock:
            state["in_flight"] -= 1
        return httpx2.Response(200, json=completion(content="ok").body)

    with make_client(slow, max_concurrency=2) as client:
        threads = [threading.Thread(target=client.chat, kwargs={"messages": MESSAGES}) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert state["calls"] == 8
    assert state["peak"] == 2


# --- response cache (database) ------------------------------------------------------------------


@pytest.mark.django_db
def test_identical_call_is_served_from_cache():
    accumulator = UsageAccumulator()
    script = Script(completion(content="cached answer", prompt_tokens=1000, completion_tokens=100))
    with make_client(script, cache=True, accumulator=accumulator) as client:
        first = client.chat(messages=MESSAGES, temperature=0.0)
        second = client.chat(messages=MESSAGES, temperature=0.0)
    assert len(script.requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.content == "cached answer"
    assert second.request_hash == first.request_hash
    assert second.usage == first.usage  # original usage stays visible
    assert second.cost_usd == 0.0
    assert second.original_cost_usd == pytest.approx(first.cost_usd)
    assert second.attempts == 0
    totals = accumulator.totals()
    assert (totals.calls, totals.cache_hits, totals.total_tokens, totals.cached_tokens) == (2, 1, 1100, 1100)
    assert totals.cost_usd == pytest.approx(first.cost_usd)
    assert totals.saved_cost_usd == pytest.approx(first.cost_usd)
    entry = LLMCacheEntry.objects.get()
    assert entry.request_hash == first.request_hash
    assert entry.model == "priced-model"
    assert KEY not in json.dumps(entry.request) + json.dumps(entry.response)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 50},
        {"messages": [{"role": "user", "content": "Latest potassium?"}]},
        {"response_format": {"type": "json_object"}},
        {"tools": [{"type": "function", "function": {"name": "Patient.read", "parameters": {"type": "object"}}}]},
        {"extra_body": {"top_k": 5}},
        {"cache_salt": "trial-2"},
    ],
)
def test_any_different_parameter_misses_the_cache(change):
    script = Script(completion(content="one"), completion(content="two"))
    with make_client(script, cache=True) as client:
        first = client.chat(messages=MESSAGES, temperature=0.0)
        second = client.chat(**{"messages": MESSAGES, "temperature": 0.0, **change})
    assert len(script.requests) == 2
    assert (first.content, second.content, second.cached) == ("one", "two", False)
    assert first.request_hash != second.request_hash


@pytest.mark.django_db
def test_other_model_or_endpoint_misses_the_cache():
    script = Script(completion(content="one"), completion(content="two"), completion(content="three"))
    with make_client(script, cache=True) as client:
        client.chat(messages=MESSAGES)
    with make_client(script, cache=True, model="other-model") as client:
        assert not client.chat(messages=MESSAGES).cached
    with make_client(script, cache=True, base_url="http://other.test/v1") as client:
        assert not client.chat(messages=MESSAGES).cached
    assert len(script.requests) == 3


@pytest.mark.django_db
def test_cache_disabled_per_call_and_per_role():
    script = Script(*(completion(content=str(i)) for i in range(4)))
    with make_client(script, cache=True) as client:
        client.chat(messages=MESSAGES, cache=False)
        assert not client.chat(messages=MESSAGES, cache=False).cached
    with make_client(script, cache=False) as client:
        client.chat(messages=MESSAGES)
        assert not client.chat(messages=MESSAGES).cached
    assert len(script.requests) == 4
    assert not LLMCacheEntry.objects.exists()


@pytest.mark.django_db
def test_errors_and_malformed_tool_calls_are_not_cached():
    bad_call = completion(tool_calls=[tool_call(name="f", arguments="{oops")])
    script = Script(error(400, "bad"), completion(content="fine"), bad_call, bad_call)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with make_client(script, cache=True) as client:
        with pytest.raises(LLMRequestError):
            client.chat(messages=MESSAGES)
        assert not client.chat(messages=MESSAGES).cached
        assert client.chat(messages=MESSAGES, tools=tools).tool_calls[0].parse_error
        assert not client.chat(messages=MESSAGES, tools=tools).cached
    assert len(script.requests) == 4
    assert LLMCacheEntry.objects.count() == 1


@pytest.mark.django_db
def test_cache_key_ignores_the_key_and_url_credentials():
    script = Script(completion(content="one"))
    with make_client(script, cache=True, base_url="http://user:pw@llm.test/v1") as client:
        first = client.chat(messages=MESSAGES)
    config = role_config(role="generator", environ={}, backend="openai", base_url=BASE_URL, model="priced-model")
    other_key = LLMClient(
        config=config,
        http_client=httpx2.Client(transport=httpx2.MockTransport(script)),
        prices=PRICES,
        environ={"OPENAI_API_KEY": "sk-another-key-000000000000"},
    )
    with other_key:
        second = other_key.chat(messages=MESSAGES)
    assert second.cached and second.request_hash == first.request_hash
    assert "pw@" not in json.dumps(LLMCacheEntry.objects.get().request)
