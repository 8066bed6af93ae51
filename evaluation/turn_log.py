"""What a turn records while it plays, and the trace it becomes.

Every protocol (PhysReview's loop in :mod:`evaluation.agent`, the released runner's in
:mod:`evaluation.protocols.release`) plays a turn through a :class:`TurnLog`, so every stored trace
has the same keys: the messages, steps and tool calls, the counts the metrics read (invalid calls,
tool faults, replay misses, truncations), the diagnostics against the gold calls, token usage and
where the time went.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

from evaluation.agents.base import Agent, AgentCall, AgentInfraError, AgentReply, AgentRequest
from evaluation.dataset import EvalSession, EvalTurn
from evaluation.diagnostics import compare_calls
from evaluation.tool_runner import ToolRunner


@dataclass(frozen=True)
class TurnOutcome:
    answer: str
    trace: dict[str, Any]
    infra_error: str


def _usage_sum(replies: list[AgentReply]) -> dict[str, Any]:
    costs = [r.cost_usd for r in replies]
    return {
        "prompt_tokens": sum(r.prompt_tokens for r in replies),
        "completion_tokens": sum(r.completion_tokens for r in replies),
        "reasoning_tokens": sum(r.reasoning_tokens for r in replies),
        "cached_tokens": sum(r.cached_tokens for r in replies),
        "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 10),
        "model_calls": len(replies),
        "cache_hits": sum(r.cached for r in replies),
        "model_latency_s": round(sum(r.latency_s for r in replies), 6),
    }


def diagnostics(*, turn: EvalTurn, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Missing, extra and argument-mismatched tool calls against gold, by tool + key arguments (in the
    contract's terms), and the arguments the tool layer dropped from the calls made (``dropped_arguments``)."""
    compared = compare_calls(
        gold=[(s.tool, s.arguments) for s in turn.gold_calls],
        made=[(str(c["name"]), c.get("arguments")) for c in calls],
    )
    dropped = [{"tool": str(c["name"]), "warning": w} for c in calls for w in c.get("warnings") or []]
    return {**compared, "dropped_arguments": dropped}


@dataclass
class TurnLog:
    """What every protocol's turn keeps while it plays: the request, the messages, the model's replies,
    the steps and the tool calls made; :meth:`outcome` turns it into the trace (:func:`turn_trace`)."""

    agent: Agent
    session: EvalSession
    turn: EvalTurn
    history: InitVar[list[dict[str, Any]]]  # the opening messages and the earlier turns'
    tools: Sequence[dict[str, Any]]
    language: str
    variant: str
    trial: int
    started: float = field(init=False)
    request_text: str = field(init=False)
    messages: list[dict[str, Any]] = field(init=False)
    first_new: int = field(init=False)  # index of this turn's first message in ``messages``
    replies: list[AgentReply] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    calls_made: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self, history: list[dict[str, Any]]) -> None:
        self.started = time.perf_counter()
        self.request_text = self.turn.request(variant=self.variant, language=self.language)
        self.messages = [*history, {"role": "user", "content": self.request_text}]
        self.first_new = len(history)

    def ask(
        self,
        *,
        stage: str,
        step: int,
        messages: list[dict[str, Any]],
        tool_choice: str | None,
        extra: dict[str, Any] | None = None,
    ) -> AgentReply:
        """One model call of the turn with the turn's tools."""
        request = AgentRequest(
            messages=messages,
            tools=self.tools,
            tool_choice=tool_choice,
            stage=stage,
            step=step,
            session=self.session,
            turn=self.turn,
            language=self.language,
            variant=self.variant,
            trial=self.trial,
            extra=extra or {},
        )
        reply = self.agent.respond(request)
        self.replies.append(reply)
        return reply

    def step(self, reply: AgentReply) -> dict[str, Any]:
        """Record a tool step's reply; returns its trace, to which :meth:`call` adds the calls."""
        step_trace: dict[str, Any] = {"stage": "step", "reply": reply.as_trace(), "calls": []}
        self.steps.append(step_trace)
        return step_trace

    def final(self, reply: AgentReply, **extra: Any) -> None:
        """Record the reply to the answer-now request (``tool_choice="none"``)."""
        self.steps.append({"stage": "final", **extra, "reply": reply.as_trace(), "calls": []})
        if reply.tool_calls:
            self.errors.append({"kind": "tool_calls_in_final_answer", "count": len(reply.tool_calls)})

    def call(self, *, runner: ToolRunner, call: AgentCall, step_trace: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call and record it in the turn and in its step."""
        record = runner.run(call)
        record.update(id=call.id, arguments=call.arguments, arguments_raw=call.arguments_raw)
        if call.parse_error:
            record["parse_error"] = call.parse_error
        self.calls_made.append(record)
        step_trace["calls"].append(record)
        return record

    def infra_error(self, exc: AgentInfraError) -> tuple[str, str]:
        """``(end_reason, infra_error)`` of a turn the endpoint failed."""
        self.errors.append({"kind": exc.kind, "message": str(exc)})
        return "infra_error", exc.kind

    def outcome(self, *, answer: str, end_reason: str, infra_error: str) -> TurnOutcome:
        trace = turn_trace(log=self, answer=answer, end_reason=end_reason)
        return TurnOutcome(answer=answer, trace=trace, infra_error=infra_error)


def turn_trace(*, log: TurnLog, answer: str, end_reason: str) -> dict[str, Any]:
    """A finished turn's trace (every protocol writes the same keys); ``messages``: the turn's own."""
    turn, replies, calls_made = log.turn, log.replies, log.calls_made
    failed = [r for r in replies if r.error]
    if failed and replies[-1].error and end_reason in {"answer", "empty_answer"}:
        end_reason = "model_error"  # the turn ended on a reply the model's own output broke
    errors = [*log.errors, *({"kind": "model_output_unparseable", "message": r.error} for r in failed)]
    usage = _usage_sum(replies)
    tools_s = sum(c["tool_s"] for c in calls_made)
    wall = time.perf_counter() - log.started
    trace = {
        "request": log.request_text,
        "messages": log.messages[log.first_new :],
        "steps": log.steps,
        "answer": answer,
        "end_reason": end_reason,
        "n_calls": len(calls_made),
        "invalid_calls": sum(bool(c["invalid"]) for c in calls_made),
        "tool_faults": sum(bool(c["tool_fault"]) for c in calls_made),
        # Arguments the contract does not know, dropped by the tool layer (one per warning).
        "unknown_arguments": sum(len(c["warnings"]) for c in calls_made),
        "replay_misses": sum(c["replay"] == "miss" for c in calls_made),
        # Replayed in the other language because the gold answer has none in the run's language.
        "replay_language_fallbacks": sum(bool(c.get("language_fallback")) for c in calls_made),
        # Release replay: the chosen literacy variant was missing, ``patient_response`` was replayed.
        "replay_literacy_fallbacks": sum(bool(c.get("literacy_fallback")) for c in calls_made),
        "patient_replies": [
            {
                "tool": c["name"],
                "arguments": c["arguments"],
                "replay": c["replay"],
                "language_fallback": bool(c.get("language_fallback")),
                "observation": c["observation"],
            }
            for c in calls_made
            if c["kind"] == "patient" and not c["invalid"]
        ],
        "writes": [
            {"tool": c["name"], "arguments": c["arguments"], "observation": c["observation"]}
            for c in calls_made
            if c["kind"] == "write" and not c["invalid"]
        ],
        "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in calls_made],
        "diagnostics": diagnostics(turn=turn, calls=calls_made),
        # Replies cut off at the output limit (finish_reason "length"), and replies the server could
        # not produce because of the model's own output (see AgentReply.error).
        "truncations": sum(r.finish_reason == "length" for r in replies),
        "model_errors": sum(bool(r.error) for r in replies),
        "usage": usage,
        "timing": {
            "wall_s": round(wall, 6),
            "tools_s": round(tools_s, 6),
            "harness_s": round(max(wall - usage["model_latency_s"] - tools_s, 0.0), 6),
        },
        "errors": errors,
    }
    return trace
