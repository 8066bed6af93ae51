"""The one client that talks to OpenAI-compatible chat-completion endpoints.

It sits on the ``openai`` package (with the SDK's own retries off) and adds what a benchmark run
needs: our retry policy, a per-client concurrency limit, the role's output budget (``max_tokens`` or
``max_completion_tokens``), token/cost accounting, a database response cache and canonical⇄API-safe
tool names. The API key is read from the environment once, when the
client is built, and handed to the SDK; it is not kept on this object, logged or put in errors.

Here lives the orchestration of one call (cache lookup, send, parse, price, store, account); the
wire body and cache key are built in :mod:`core.llm.request`, the POST with retries and error
wording is :mod:`core.llm.transport`, and reading the answer is :mod:`core.llm.result`.
"""

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx2

from core.llm import cache as response_cache
from core.llm.accounting import UsageAccumulator, note_failure, note_result
from core.llm.config import LLMConfig, display_url, env_var_names, role_config
from core.llm.data_use import DataUseRule
from core.llm.errors import LLMConfigError, LLMError, LLMRequestError, LLMResponseError, RulesBackendError
from core.llm.prices import PriceTable, load_prices
from core.llm.request import ToolsCache, build_request
from core.llm.result import ChatResult, ParsedBody, parse_body
from core.llm.retry import RetryPolicy
from core.llm.toolnames import outgoing
from core.llm.transport import json_or_none, post_with_retries

log = logging.getLogger("core.llm")


class LLMClient:
    """Chat completions for one role. Share one instance between threads: the limit is per instance."""

    def __init__(
        self,
        *,
        config: LLMConfig,
        http_client: httpx2.Client | None = None,
        prices: PriceTable | None = None,
        accumulator: UsageAccumulator | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        environ: Mapping[str, str] | None = None,
        data_use: DataUseRule | None = None,
    ) -> None:
        if config.backend != "openai":
            raise _rules_error(config)
        # Before anything else (key, SDK, connection): a refused endpoint must not receive a byte.
        self.data_use = data_use
        if data_use is not None:
            data_use.check(base_url=config.base_url)
        env = os.environ if environ is None else environ
        api_key = env.get(config.api_key_env, "")
        if not api_key.strip():
            raise LLMConfigError(
                f"LLM role {config.role!r} uses the openai backend but the environment variable "
                f"{config.api_key_env} (named by {env_var_names(role=config.role)['api_key_env']}) is not set."
            )
        self.config = config
        self.prices = prices if prices is not None else load_prices(environ=env)
        self.accumulator = accumulator
        self.retry = retry if retry is not None else RetryPolicy(max_retries=config.max_retries)
        self._sleep = sleep
        self._rand = rand
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._tools = ToolsCache()
        # What the endpoint serves (model entry, chat template), set by core.llm.preflight: part of
        # the cache key, so a changed server behind the same URL and model name is not answered from cache.
        self.server_fingerprint = ""
        # SDK retries off: ours honour Retry-After, use full jitter and are counted per call.
        import openai  # imported on first use: a large package that commands without a model need not load

        self._sdk = openai.OpenAI(
            base_url=config.base_url,
            api_key=api_key,
            timeout=config.timeout_s,
            max_retries=0,
            http_client=http_client,
        )

    def __repr__(self) -> str:
        c = self.config
        return f"LLMClient(role={c.role!r}, model={c.model!r}, endpoint={c.endpoint!r})"

    def close(self) -> None:
        self._sdk.close()

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def chat(
        self,
        *,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        reasoning_effort: str | None = None,
        max_tokens: int | None = None,
        max_completion_tokens: int | None = None,
        seed: int | None = None,
        extra_body: dict[str, Any] | None = None,
        cache: bool | None = None,
        cache_salt: str = "",
    ) -> ChatResult:
        """One chat completion. ``None`` parameters are not sent (the server default applies), except the
        output budget: ``max_tokens=None`` sends the role's ``LLM_<ROLE>_MAX_TOKENS`` (unless that is
        ``none``), under the field the role's ``MAX_TOKENS_FIELD`` names; an explicit
        ``max_completion_tokens`` is sent as such.

        Tool names may be canonical (``Observation.search``): they are sent API-safe and mapped
        back in :attr:`ChatResult.tool_calls`. ``cache=None`` follows the role's setting;
        ``cache_salt`` separates otherwise identical requests (e.g. repeated trials for pass^k).
        Raises :class:`LLMRequestError` (HTTP/network failure) or :class:`LLMResponseError`.
        """
        if self.data_use is not None:
            self.data_use.check(base_url=self.config.base_url)
        started = time.monotonic()
        prepared = self._tools.get(tools)
        to_name = prepared.to_name
        api_messages, _, api_choice = outgoing(
            messages=messages, tools=None, tool_choice=tool_choice, to_api=prepared.to_api
        )
        params: dict[str, Any] = {"model": self.config.model, "messages": api_messages}
        optional = {
            "tool_choice": api_choice,
            "response_format": response_format,
            "temperature": self.config.temperature if temperature is None else temperature,
            "reasoning_effort": reasoning_effort,
            "seed": seed,
            **self._budget(max_tokens=max_tokens, max_completion_tokens=max_completion_tokens),
        }
        params.update({name: value for name, value in optional.items() if value is not None})
        # Everything that can change the answer, nothing secret (the key is a header, not in here).
        base_url = display_url(self.config.base_url)
        server = self.server_fingerprint
        wire = build_request(
            params=params, tools=prepared, base_url=base_url, extra_body=extra_body, salt=cache_salt, server=server
        )
        key = wire.key
        use_cache = self.config.cache if cache is None else cache

        if use_cache and (hit := self._from_cache(key=key, to_name=to_name, started=started)) is not None:
            return self._finish(hit)

        try:
            body, attempts, backoff = post_with_retries(
                sdk=self._sdk,
                slots=self._slots,
                config=self.config,
                retry=self.retry,
                sleep=self._sleep,
                rand=self._rand,
                content=wire.body,
            )
            parsed = self._parse(body=body, to_name=to_name)
        except LLMError as exc:
            elapsed = time.monotonic() - started
            if isinstance(exc, LLMRequestError):
                exc.elapsed_s = elapsed
            note_failure(elapsed_s=elapsed, backoff_s=getattr(exc, "backoff_s", 0.0))
            raise
        cost = self.prices.cost_usd(model=self.config.model or "", usage=parsed.usage)
        # Only well-formed answers are kept: a malformed tool call must be retryable by re-asking.
        if use_cache and all(call.parse_error is None for call in parsed.tool_calls):
            response_cache.store(
                key=key,
                base_url=base_url,
                model=self.config.model or "",
                request=wire.stored,
                response=body,
                prompt_tokens=parsed.usage.prompt_tokens if parsed.usage else None,
                completion_tokens=parsed.usage.completion_tokens if parsed.usage else None,
                cost_usd=cost,
            )
        return self._finish(
            self._result(
                parsed=parsed,
                body=body,
                key=key,
                cost=cost,
                original_cost=cost,
                cached=False,
                attempts=attempts,
                started=started,
                backoff_s=backoff,
            )
        )

    def get_json(self, *, path: str, timeout_s: float | None = None) -> tuple[int | None, object]:
        """One GET (no retries) of ``path`` under the base URL, or of an absolute URL on the same host.

        Returns ``(status, JSON body or None)``; ``status`` is ``None`` when the endpoint could not be
        reached (timeout, connection). For probes such as ``/models``: the caller decides what a
        status means.
        """
        import openai

        if self.data_use is not None:
            self.data_use.check(base_url=path if "://" in path else self.config.base_url)
        try:
            with self._slots:
                response = self._sdk.get(
                    path, cast_to=httpx2.Response, options={"timeout": timeout_s or self.config.timeout_s}
                )
                return response.status_code, json_or_none(response)
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict | list) else None
            return exc.status_code, body
        except openai.OpenAIError:
            return None, None

    # --- internals ------------------------------------------------------------------------------

    def _budget(self, *, max_tokens: int | None, max_completion_tokens: int | None) -> dict[str, int | None]:
        """The output budget fields of a request (see :meth:`chat`)."""
        if max_completion_tokens is not None:
            return {"max_completion_tokens": max_completion_tokens, "max_tokens": max_tokens}
        return {self.config.max_tokens_field: self.config.max_tokens if max_tokens is None else max_tokens}

    def _from_cache(self, *, key: str, to_name: dict[str, str], started: float) -> ChatResult | None:
        entry = response_cache.lookup(key=key)
        if entry is None:
            return None
        try:
            parsed = parse_body(body=entry.response, api_to_name=to_name)
        except ValueError:
            log.warning("LLM cache: entry %s is unreadable; asking the endpoint again", key[:12])
            return None
        original = float(entry.cost_usd) if entry.cost_usd is not None else None
        return self._result(
            parsed=parsed,
            body=entry.response,
            key=key,
            cost=0.0,
            original_cost=original,
            cached=True,
            attempts=0,
            started=started,
        )

    def _parse(self, *, body: dict[str, Any], to_name: dict[str, str]) -> ParsedBody:
        try:
            return parse_body(body=body, api_to_name=to_name)
        except ValueError as exc:
            raise LLMResponseError(
                f"LLM role {self.config.role!r}: {self.config.endpoint} returned a malformed chat completion: {exc}.",
                role=self.config.role,
                endpoint=self.config.endpoint,
            ) from None

    def _result(
        self,
        *,
        parsed: ParsedBody,
        body: dict[str, Any],
        key: str,
        cost: float | None,
        original_cost: float | None,
        cached: bool,
        attempts: int,
        started: float,
        backoff_s: float = 0.0,
    ) -> ChatResult:
        return ChatResult(
            content=parsed.content,
            tool_calls=parsed.tool_calls,
            finish_reason=parsed.finish_reason,
            usage=parsed.usage,
            cost_usd=cost,
            original_cost_usd=original_cost,
            model=self.config.model or "",
            response_model=parsed.response_model,
            latency_s=time.monotonic() - started,
            cached=cached,
            attempts=attempts,
            request_hash=key,
            role=self.config.role,
            raw=body,
            backoff_s=backoff_s,
            system_fingerprint=parsed.system_fingerprint,
        )

    def _finish(self, result: ChatResult) -> ChatResult:
        if self.accumulator is not None:
            self.accumulator.add(result)
        note_result(result, backoff_s=result.backoff_s)
        log.debug(
            "LLM role %s: model=%s tokens=%s cost=%s latency=%.3fs cached=%s attempts=%d hash=%s",
            result.role,
            result.model,
            result.usage.total_tokens if result.usage else "unknown",
            "unknown" if result.cost_usd is None else f"{result.cost_usd:.6f}",
            result.latency_s,
            result.cached,
            result.attempts,
            result.request_hash[:12],
        )
        return result


def get_client(
    *,
    role: str | None = None,
    config: LLMConfig | None = None,
    http_client: httpx2.Client | None = None,
    accumulator: UsageAccumulator | None = None,
    sleep: Callable[[float], None] = time.sleep,
    environ: Mapping[str, str] | None = None,
    data_use: DataUseRule | None = None,
) -> LLMClient:
    """A client for ``role`` (configured from the environment) or for an explicit ``config``.

    Raises :class:`RulesBackendError` when the role uses the ``rules`` backend: that backend is a
    deterministic implementation in the scenarios/evaluation apps, not an LLM behind this client.
    """
    if (role is None) == (config is None):
        raise TypeError("get_client() needs exactly one of role= or config=")
    if config is None:
        config = role_config(role=role, environ=environ)
    return LLMClient(
        config=config,
        http_client=http_client,
        accumulator=accumulator,
        sleep=sleep,
        environ=environ,
        data_use=data_use,
    )


def _rules_error(config: LLMConfig) -> RulesBackendError:
    name = env_var_names(role=config.role)["backend"]
    return RulesBackendError(
        f"LLM role {config.role!r} uses the 'rules' backend, which has no LLM client: call the rules "
        f"implementation for this role instead, or set {name}=openai (with a model and an API key) to use an LLM."
    )
