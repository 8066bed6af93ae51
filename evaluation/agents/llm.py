"""The model under test behind any OpenAI-compatible endpoint, through :mod:`core.llm`.

Retries (with Retry-After), the concurrency limit, cost and the response cache (keyed by the request
hash, salted by the trial so repeated trials for pass^k are real samples) come from the LLM client.
"""

from __future__ import annotations

from typing import Any

from core.llm import LLMClient, LLMRequestError, LLMResponseError, role_config
from core.llm.config import display_url
from evaluation.agents.base import AgentCall, AgentInfraError, AgentReply, AgentRequest

ROLE = "model_under_test"


def llm_config(
    *,
    model: str,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
    concurrency: int,
    role: str = ROLE,
    timeout_s: float | None = None,
    max_retries: int | None = None,
    max_tokens: int | None = None,
    cache: bool | None = None,
) -> Any:
    """The role's configuration; ``None`` arguments leave the environment's (or the default) value,
    e.g. ``max_tokens=None`` the role's ``LLM_<ROLE>_MAX_TOKENS``."""
    return role_config(
        role=role,
        backend="openai",
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=temperature,
        max_concurrency=concurrency,
        timeout_s=timeout_s,
        max_retries=max_retries,
        max_tokens=max_tokens,
        cache=cache,
    )


def endpoint_info(config: Any) -> dict[str, Any]:
    """What the manifest keeps of the endpoint: URL without credentials, and the *name* of the key variable."""
    return {"base_url": display_url(config.base_url), "api_key_env": config.api_key_env, "model": config.model}


def _reasoning_tokens(raw: dict[str, Any]) -> int:
    details = (raw.get("usage") or {}).get("completion_tokens_details") or {}
    value = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0


class OpenAIAgent:
    def __init__(
        self,
        *,
        client: LLMClient,
        temperature: float | None = None,
        reasoning_effort: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.client = client
        self.name = client.config.model or "unknown"
        self.temperature = temperature
        self.reasoning_effort = reasoning_effort
        # None: the endpoint's (or the role's) default output budget.
        self.max_tokens = max_tokens

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "openai",
            "name": self.name,
            "temperature": self.temperature,
            "reasoning_effort": self.reasoning_effort,
            "max_tokens": self.max_tokens,
        }

    def respond(self, request: AgentRequest) -> AgentReply:
        try:
            result = self.client.chat(
                messages=request.messages,
                tools=request.tools,
                tool_choice=request.tool_choice,
                temperature=self.temperature,
                reasoning_effort=self.reasoning_effort,
                max_tokens=self.max_tokens,
                cache_salt=f"trial:{request.trial}",
            )
        except LLMRequestError as exc:
            if exc.unparseable:
                # The server could not parse the model's output (the history we send is well-formed):
                # the model's failure, not the endpoint's. The turn goes on with an empty reply.
                return AgentReply(
                    content=None, attempts=exc.attempts, latency_s=exc.elapsed_s, finish_reason="error", error=str(exc)
                )
            kind = f"http_{exc.status}" if exc.status else ("timeout" if exc.kind == "timeout" else "connection")
            raise AgentInfraError(kind, str(exc)) from None
        except LLMResponseError as exc:
            raise AgentInfraError("malformed_response", str(exc)) from None
        usage = result.usage
        return AgentReply(
            content=result.content,
            tool_calls=tuple(
                AgentCall(
                    id=c.id or f"call_{i}",
                    name=c.name,
                    arguments_raw=c.arguments_raw,
                    arguments=c.arguments,
                    parse_error=c.parse_error,
                )
                for i, c in enumerate(result.tool_calls)
            ),
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            reasoning_tokens=_reasoning_tokens(result.raw),
            cached_tokens=usage.cached_prompt_tokens if usage else 0,
            cost_usd=result.cost_usd,
            latency_s=result.latency_s,
            cached=result.cached,
            attempts=result.attempts,
            request_hash=result.request_hash,
            finish_reason=result.finish_reason,
        )
