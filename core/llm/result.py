"""Typed result of one chat call, parsed from the raw response body.

The same parser reads a live response and a cached one, so a cache hit is indistinguishable from
the original call except for ``cached``, ``cost_usd``, ``attempts`` and ``latency_s``.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    # Prompt tokens the provider served from its own prompt cache (cheaper on some providers).
    cached_prompt_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A function call requested by the model.

    ``name`` is the canonical tool name (``Observation.search``); ``api_name`` what went over the
    wire (``Observation__search``). Malformed ``arguments`` JSON is reported, not raised:
    ``arguments`` is then ``None`` and ``parse_error`` says why, so the caller can score or retry.
    """

    id: str
    name: str
    api_name: str
    arguments_raw: str
    arguments: dict[str, Any] | None
    parse_error: str | None = None


@dataclass(frozen=True, kw_only=True)
class ChatResult:
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: Usage | None
    cost_usd: float | None  # None = unknown price; 0.0 on a cache hit (the call itself cost nothing)
    original_cost_usd: float | None  # what the response cost when it was first fetched
    model: str  # model requested; ``response_model`` is what the server says it used
    response_model: str | None
    latency_s: float
    cached: bool
    attempts: int  # HTTP requests made for this call (0 on a cache hit)
    request_hash: str
    role: str
    raw: dict[str, Any] = field(repr=False, compare=False)
    backoff_s: float = 0.0  # part of ``latency_s`` spent asleep between attempts (retry backoff)
    system_fingerprint: str | None = None  # the server's build/configuration id, when it sends one

    @property
    def tool_calls_ok(self) -> bool:
        return all(call.parse_error is None for call in self.tool_calls)


@dataclass(frozen=True, kw_only=True)
class ParsedBody:
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: Usage | None
    response_model: str | None
    system_fingerprint: str | None = None


def parse_body(*, body: object, api_to_name: Mapping[str, str]) -> ParsedBody:
    """Parse a chat-completion body; raises ``ValueError`` naming the missing part if it is not one."""
    if not isinstance(body, dict):
        raise ValueError("response body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("response choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError("message content is not a string")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ValueError("message tool_calls is not a list")
    return ParsedBody(
        content=content,
        tool_calls=tuple(_parse_tool_call(call, api_to_name=api_to_name) for call in raw_calls),
        finish_reason=choices[0].get("finish_reason"),
        usage=_parse_usage(body.get("usage")),
        response_model=body.get("model") if isinstance(body.get("model"), str) else None,
        system_fingerprint=body.get("system_fingerprint") if isinstance(body.get("system_fingerprint"), str) else None,
    )


def _parse_tool_call(call: object, *, api_to_name: Mapping[str, str]) -> ToolCall:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise ValueError("tool call without a function")
    function = call["function"]
    api_name = function.get("name")
    if not isinstance(api_name, str) or not api_name:
        raise ValueError("tool call without a function name")
    raw = function.get("arguments")
    raw = "" if raw is None else raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    arguments: dict[str, Any] | None = None
    error: str | None = None
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        error = f"arguments are not valid JSON: {exc}"
    else:
        if isinstance(parsed, dict):
            arguments = parsed
        else:
            error = f"arguments are JSON {type(parsed).__name__}, not an object"
    return ToolCall(
        id=str(call.get("id") or ""),
        # A name the model invented is kept as sent, so the caller can report it.
        name=api_to_name.get(api_name, api_name),
        api_name=api_name,
        arguments_raw=raw,
        arguments=arguments,
        parse_error=error,
    )


def _parse_usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None

    def count(value: object) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    prompt, completion = count(raw.get("prompt_tokens")), count(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=count(raw.get("total_tokens")) or prompt + completion,
        cached_prompt_tokens=cached,
    )
