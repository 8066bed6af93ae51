"""What the agent loop asks an agent and what it gets back (LLM and rules agents alike)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluation.dataset import EvalSession, EvalTurn


@dataclass(frozen=True)
class AgentCall:
    id: str
    name: str  # canonical when known, else as sent
    arguments_raw: str
    arguments: dict[str, Any] | None
    parse_error: str | None = None


@dataclass(frozen=True)
class AgentReply:
    content: str | None
    tool_calls: tuple[AgentCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 0
    request_hash: str = ""
    finish_reason: str | None = None
    # The call failed because of the model's own output (e.g. the server could not parse its tool
    # call): an empty reply the turn goes on with, the model's failure rather than an infrastructure one.
    error: str = ""

    def as_trace(self) -> dict[str, Any]:
        extra = {"error": self.error} if self.error else {}
        return {
            **extra,
            "content": self.content,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments_raw, "parse_error": c.parse_error}
                for c in self.tool_calls
            ],
            "usage": {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "reasoning_tokens": self.reasoning_tokens,
                "cached_tokens": self.cached_tokens,
            },
            "cost_usd": self.cost_usd,
            "latency_s": round(self.latency_s, 6),
            "cached": self.cached,
            "attempts": self.attempts,
            "request_hash": self.request_hash,
            "finish_reason": self.finish_reason,
        }


@dataclass(frozen=True)
class AgentRequest:
    """One model call. ``stage`` is ``step`` (tools allowed) or ``final`` (write the answer now)."""

    messages: list[dict[str, Any]]
    tools: Sequence[dict[str, Any]]
    tool_choice: str | None
    stage: str
    step: int
    session: EvalSession
    turn: EvalTurn
    language: str
    variant: str
    trial: int
    extra: dict[str, Any] = field(default_factory=dict)


class AgentInfraError(Exception):
    """The endpoint failed (HTTP error after retries, timeout, connection, malformed body): not the model's fault."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Agent(Protocol):
    name: str

    def respond(self, request: AgentRequest) -> AgentReply: ...

    def describe(self) -> dict[str, Any]: ...
