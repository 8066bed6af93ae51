"""The agent loop: one session, turns in order, live tools at the session's cutoff, replayed patient.

Per turn: the model gets the system prompt (environment info), its own earlier answers, and the
physician's request; it may call several tools per step. ``prepare_to_answer`` or a plain answer
ends tool use; after ``prepare_to_answer`` (or when the step limit of ``max_steps`` tool calls is
reached) one more call with ``tool_choice="none"`` asks for the answer. Invalid calls get the tool
layer's structured error back and are counted. Arguments the released tool contract does not know
are dropped by the tool layer, named in the result's ``warnings`` (the model sees them) and counted
per turn (``unknown_arguments``); the call itself runs. Write tools are simulated by the tool layer and
recorded. An endpoint failure ends the turn with ``end_reason="infra_error"`` (kept apart from model
failures in the metrics).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

from ehr.fhir import REGISTRY, ToolContext, canonical_name, execute_tool, tool_schemas
from ehr.fhir.errors import ToolError
from ehr.fhir.execute import PATIENT_SCOPE_NAMES, parse_arguments
from ehr.fhir.params import clean_arguments
from evaluation.agents.base import Agent, AgentCall, AgentInfraError, AgentReply, AgentRequest
from evaluation.dataset import EvalSession, EvalTurn
from evaluation.diagnostics import compare_calls
from evaluation.replay import OrderReplayBook, ReplayBook
from scenarios.patient import make_patient_responder, public_view

DEFAULT_MAX_STEPS = 16
_TOOL_FAULT_HINT = "problem of the tool"
# A tool layer error result: the error, how to fix it, and what was dropped from the call on the way.
_ERROR_KEYS = frozenset({"error", "hint", "warnings"})

SYSTEM_PROMPT = {
    "en": (
        "You are a clinical assistant helping a physician during a clinical session. Answer the physician's "
        "requests precisely. Use the EHR tools to look up the record and the patient tools to ask the patient; "
        "write tools place (simulated) orders. Requests may be brief or refer back to earlier turns. Only data "
        "charted before the current date exists (nothing of the current date is charted yet). When you have "
        "what you need, call prepare_to_answer, then write your answer to the physician.\n\n"
        "Environment:\nsession_id: {session_id}\nCurrent date: {current_date}\nPatient: {age}-year-old {sex}\n"
        "Patient id (subject_id): {subject_id}; current admission (hadm_id): {hadm_id}"
    ),
    "zh": (
        "你是协助医生进行临床工作的助手。请准确回答医生的请求。使用电子病历工具查询病历，使用患者工具询问患者；"
        "写入工具用于（模拟）下达医嘱。请求可能很简短或指代之前的对话。"
        "只有当前日期之前记录的数据存在（当前日期当天尚无记录）。"
        "获取所需信息后，先调用 prepare_to_answer，再用中文回答医生。\n\n"
        "环境信息：\nsession_id: {session_id}\n当前日期：{current_date}\n患者：{age} 岁，{sex}\n"
        "患者编号 (subject_id)：{subject_id}；本次住院 (hadm_id)：{hadm_id}"
    ),
}
_SEX_ZH = {"male": "男", "female": "女"}
STEP_LIMIT_MESSAGE = {"error": "step limit reached", "hint": "No more tool calls in this turn; answer now."}
_TOOL_SCHEMAS: dict[str, tuple[dict[str, Any], ...]] = {}


def run_tools(*, language: str) -> tuple[dict[str, Any], ...]:
    """The tool schemas a run offers, built once per language: one tuple object, so the LLM client
    renames and serialises them once (see core.llm.request). Not to be mutated."""
    if language not in _TOOL_SCHEMAS:
        _TOOL_SCHEMAS[language] = tuple(tool_schemas(language=language))
    return _TOOL_SCHEMAS[language]


def system_prompt(*, session: EvalSession, language: str) -> str:
    sex = session.sex or "unknown"
    return SYSTEM_PROMPT[language].format(
        session_id=session.session_id,
        current_date=session.current_date.isoformat(),
        age=session.age if session.age is not None else "?",
        sex=_SEX_ZH.get(sex, sex) if language == "zh" else sex,
        subject_id=session.subject_id,
        hadm_id=session.hadm_id,
    )


@dataclass(frozen=True)
class TurnOutcome:
    answer: str
    trace: dict[str, Any]
    infra_error: str


# Sent back in place of arguments that are not a JSON object (a call cut off at the output limit):
# servers parse the history, and one that cannot rejects every later request of the turn.
ARGUMENTS_PLACEHOLDER = "{}"


def _assistant_message(reply: AgentReply) -> dict[str, Any]:
    """The model's reply as history; malformed arguments become :data:`ARGUMENTS_PLACEHOLDER` (the
    raw text stays in the trace, and the call's tool result tells the model what was wrong)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": ARGUMENTS_PLACEHOLDER if c.parse_error is not None else c.arguments_raw,
                },
            }
            for c in reply.tool_calls
        ]
    return message


class ToolRunner:
    """Executes one session's tool calls: live EHR, simulated writes, replayed patient."""

    def __init__(
        self,
        *,
        session: EvalSession,
        language: str,
        live_patient: bool = False,
        bounds: str = "strict",
        literacy: str | None = None,
    ) -> None:
        """``literacy`` set: the release's patient replay (by tool name and call order, that literacy
        variant; see :class:`~evaluation.replay.OrderReplayBook`); else replay keyed by arguments."""
        self.context = ToolContext.for_session(session, bounds=bounds)
        self.language = language
        self.book = ReplayBook.for_session(session)
        self.literacy = literacy
        self.order_book = OrderReplayBook.for_session(session, language=language) if literacy else None
        # --live-patient: the generator's record-grounded patient answers instead of the reviewed replay.
        self.live_patient = make_patient_responder(default_language=language) if live_patient else None

    def run(self, call: AgentCall) -> dict[str, Any]:
        """``{"name", "kind", "observation", "invalid", "tool_fault", "replay", "warnings", "tool_s"}``.

        ``warnings``: what the tool layer said it did to fit the call to the contract (unknown
        arguments dropped); the model sees them in the observation too.
        """
        started = time.perf_counter()
        canonical = canonical_name(call.name) if isinstance(call.name, str) else None
        kind = REGISTRY[canonical].kind if canonical else "unknown"
        record: dict[str, Any] = {"name": canonical or call.name, "kind": kind, "replay": None}
        if call.parse_error is not None:
            observation: Any = execute_tool(name=call.name, arguments=call.arguments_raw, context=self.context)
        elif kind == "patient":
            observation = self._patient(canonical, call)
            hit = observation.pop("_hit", False)
            record["language_fallback"] = observation.pop("_language_fallback", False)
            if self.order_book is not None:
                record["literacy_fallback"] = observation.pop("_literacy_fallback", False)
            record["replay"] = "live" if self.live_patient else ("hit" if hit else "miss")
        else:
            observation = execute_tool(name=call.name, arguments=call.arguments, context=self.context)
        is_error = isinstance(observation, dict) and "error" in observation and set(observation) <= _ERROR_KEYS
        warnings = observation.get("warnings") if isinstance(observation, dict) else None
        record["warnings"] = [str(w) for w in warnings] if isinstance(warnings, list) else []
        record["tool_fault"] = is_error and _TOOL_FAULT_HINT in str(observation.get("hint", ""))
        record["invalid"] = is_error and not record["tool_fault"]
        if is_error:
            record["replay"] = None
        record["observation"] = observation
        record["tool_s"] = round(time.perf_counter() - started, 6)
        return record

    def skip_patient_reply(self, *, tool: str) -> None:
        """Release replay on resume: a finished turn was served this tool's next gold answer."""
        if self.order_book is not None:
            self.order_book.advance(tool=tool)

    def _patient(self, tool: str, call: AgentCall) -> dict[str, Any]:
        try:
            # As execute_tool does: the harness knows the patient, whatever the model passed for it.
            raw = {
                k: v
                for k, v in parse_arguments(tool=tool, arguments=call.arguments).items()
                if k not in PATIENT_SCOPE_NAMES
            }
            raw["subject_id"], raw["session_id"] = self.context.subject_id, self.context.session_id
            cleaned = clean_arguments(
                tool=REGISTRY[tool], arguments=raw, filled={"subject_id": self.context.subject_id}
            )
        except ToolError as exc:
            return exc.as_dict()
        args = {k: v for k, v in cleaned.args.items() if v is not None}
        warnings = {"warnings": list(cleaned.warnings)} if cleaned.warnings else {}
        if self.live_patient is not None:
            live = {**args, "language": self.language}
            try:
                answer = self.live_patient(tool=tool, arguments=live, context=self.context)
            except ToolError as exc:
                return exc.as_dict()
            # The model sees the patient's words only, as with a replayed answer (no facts or persona).
            seen = public_view(answer) if "answer" in answer and "language" in answer else answer
            return {**seen, **warnings}
        if self.order_book is not None:
            by_order, literacy_fallback = self.order_book.reply(
                tool=tool, language=self.language, literacy=self.literacy or "high"
            )
            return {
                **by_order.observation,
                **warnings,
                "_hit": by_order.hit,
                "_language_fallback": by_order.language_fallback,
                "_literacy_fallback": literacy_fallback,
            }
        replayed = self.book.reply(tool=tool, arguments=args, language=self.language)
        return {
            **replayed.observation,
            **warnings,
            "_hit": replayed.hit,
            "_language_fallback": replayed.language_fallback,
        }


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


def run_turn(
    *,
    agent: Agent,
    session: EvalSession,
    turn: EvalTurn,
    history: list[dict[str, Any]],
    runner: ToolRunner,
    language: str,
    variant: str,
    trial: int,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> TurnOutcome:
    """One turn; ``history`` is the system prompt plus earlier requests and the model's own answers."""
    tools = run_tools(language=language)
    log = TurnLog(agent, session, turn, history, tools, language=language, variant=variant, trial=trial)
    messages, calls_made = log.messages, log.calls_made
    end_reason, answer, infra_error = "", "", ""

    def ask(stage: str, step: int) -> AgentReply:
        return log.ask(stage=stage, step=step, messages=messages, tool_choice="none" if stage == "final" else None)

    try:
        step = 0
        ready = False
        while True:
            reply = ask("step", step)
            step_trace = log.step(reply)
            if not reply.tool_calls:
                answer, end_reason = reply.content or "", "answer"
                break
            messages.append(_assistant_message(reply))
            for call in reply.tool_calls:
                if len(calls_made) >= max_steps:
                    observation: Any = STEP_LIMIT_MESSAGE
                    step_trace["calls"].append({"id": call.id, "name": call.name, "skipped": "step_limit"})
                else:
                    record = log.call(runner=runner, call=call, step_trace=step_trace)
                    observation = record["observation"]
                    ready = ready or record["name"] == "prepare_to_answer"
                content = observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            step += 1
            if ready or len(calls_made) >= max_steps:
                end_reason = "prepare_to_answer" if ready else "step_limit"
                final = ask("final", step)
                log.final(final)
                answer = final.content or ""
                messages.append({"role": "assistant", "content": answer})
                break
    except AgentInfraError as exc:
        end_reason, infra_error = log.infra_error(exc)
    if end_reason == "answer":
        messages.append({"role": "assistant", "content": answer})
    return log.outcome(answer=answer, end_reason=end_reason, infra_error=infra_error)


def session_history(*, session: EvalSession, language: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": system_prompt(session=session, language=language)}]
