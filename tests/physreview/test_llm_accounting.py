"""Price table, retry delays and the usage accumulator (pure units, no HTTP)."""

import json
from email.utils import formatdate

import pytest

from core.llm import ChatResult, LLMConfigError, RetryPolicy, Usage, UsageAccumulator, load_prices
from core.llm.retry import is_retryable_status, retry_after_s


def usage(prompt=1000, completion=100, cached=0):
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cached_prompt_tokens=cached,
    )


def test_bundled_price_table_matches_exact_names_and_longest_prefix():
    table = load_prices(environ={})
    assert table.price_for(model="gpt-4o").input == 2.5
    # A dated snapshot is priced as its own family, not as the shorter "gpt-4o".
    assert table.price_for(model="gpt-4o-mini-2024-07-18") == table.price_for(model="gpt-4o-mini")
    assert table.price_for(model="my-local-llama") is None
    assert table.cost_usd(model="my-local-llama", usage=usage()) is None
    assert table.cost_usd(model="gpt-4o", usage=None) is None
    assert table.cost_usd(model="gpt-4o", usage=usage()) == pytest.approx((1000 * 2.5 + 100 * 10.0) / 1e6)


def test_provider_cached_prompt_tokens_use_the_cached_price():
    table = load_prices(environ={})
    cost = table.cost_usd(model="gpt-4o", usage=usage(prompt=1000, completion=0, cached=400))
    assert cost == pytest.approx((600 * 2.5 + 400 * 1.25) / 1e6)


def test_prices_file_from_environment(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"qwen3": {"input": 0, "output": 0}, "x": {"input": 1, "output": 2}}}))
    table = load_prices(environ={"LLM_PRICES_FILE": str(path)})
    assert table.cost_usd(model="qwen3-8b", usage=usage()) == 0.0
    assert table.cost_usd(model="gpt-4o", usage=usage()) is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "cannot use price file"),
        ('{"gpt": {}}', 'expected an object with a "models" object'),
        ('{"models": {"m": {"input": 1}}}', 'model \'m\' needs "input" and "output"'),
        ('{"models": {"m": {"input": -1, "output": 1}}}', "model 'm': input must be a non-negative number"),
        ('{"models": {"m": {"input": "1", "output": 1}}}', "model 'm': input must be a non-negative number"),
    ],
)
def test_bad_prices_file_names_the_variable_and_the_problem(tmp_path, content, expected):
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(LLMConfigError) as caught:
        load_prices(environ={"LLM_PRICES_FILE": str(path)})
    assert str(caught.value).startswith("LLM_PRICES_FILE: cannot use price file")
    assert expected in str(caught.value)


def test_missing_prices_file():
    with pytest.raises(LLMConfigError, match=r"LLM_PRICES_FILE: cannot use price file '/nonexistent/p\.json'"):
        load_prices(environ={"LLM_PRICES_FILE": "/nonexistent/p.json"})


def test_retry_after_seconds_milliseconds_and_http_date():
    now = 1_800_000_000.0
    assert retry_after_s(headers={"Retry-After": "3"}, now=lambda: now) == 3.0
    assert retry_after_s(headers={"retry-after-ms": "250", "Retry-After": "3"}, now=lambda: now) == 0.25
    date = formatdate(now + 42, usegmt=True)
    assert retry_after_s(headers={"Retry-After": date}, now=lambda: now) == pytest.approx(42.0)
    assert retry_after_s(headers={"Retry-After": formatdate(now - 10, usegmt=True)}, now=lambda: now) == 0.0
    assert retry_after_s(headers={"Retry-After": "soon"}, now=lambda: now) is None
    assert retry_after_s(headers={"Retry-After": "-5"}, now=lambda: now) is None
    assert retry_after_s(headers={}, now=lambda: now) is None


def test_backoff_is_exponential_with_full_jitter_and_capped():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=10.0, max_retry_after_s=30.0)
    assert [policy.delay_s(retry_number=n, rand=lambda: 1.0) for n in (1, 2, 3, 4, 5, 50)] == [1, 2, 4, 8, 10, 10]
    assert policy.delay_s(retry_number=3, rand=lambda: 0.0) == 0.0
    assert policy.delay_s(retry_number=3, rand=lambda: 0.5) == 2.0
    assert policy.delay_s(retry_number=1, headers={"Retry-After": "999"}) == 30.0
    assert policy.delay_s(retry_number=1, headers={"Retry-After": "bad"}, rand=lambda: 1.0) == 1.0


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (429, True),
        (408, True),
        (500, True),
        (503, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (409, False),
        (422, False),
    ],
)
def test_retryable_statuses(status, retry):
    assert is_retryable_status(status) is retry


def _result(*, cost, cached=False, original=None, tokens=(100, 10)):
    return ChatResult(
        content="x",
        tool_calls=(),
        finish_reason="stop",
        usage=usage(*tokens),
        cost_usd=cost,
        original_cost_usd=original if original is not None else cost,
        model="m",
        response_model="m",
        latency_s=0.5,
        cached=cached,
        attempts=0 if cached else 2,
        request_hash="0" * 64,
        role="judge",
        raw={},
    )


def test_accumulator_reports_unknown_cost_as_unknown():
    accumulator = UsageAccumulator()
    accumulator.add(_result(cost=0.01))
    assert accumulator.totals().cost_usd == pytest.approx(0.01)
    accumulator.add(_result(cost=None))
    totals = accumulator.totals()
    assert totals.cost_usd is None
    assert totals.known_cost_usd == pytest.approx(0.01)
    assert totals.unknown_cost_calls == 1
    summary = totals.as_dict()
    assert summary["cost_usd"] is None and summary["calls"] == 2 and summary["attempts"] == 4
    json.dumps(summary)


def test_accumulator_counts_cache_hits_apart():
    accumulator = UsageAccumulator()
    accumulator.add(_result(cost=0.0, cached=True, original=0.02))
    accumulator.add(_result(cost=0.0, cached=True, original=None))  # cached response of an unpriced model
    totals = accumulator.totals()
    assert (totals.calls, totals.cache_hits, totals.total_tokens, totals.cached_tokens) == (2, 2, 0, 220)
    assert totals.cost_usd == 0.0  # cache hits cost nothing, even for an unpriced model
    assert totals.saved_cost_usd == pytest.approx(0.02)
