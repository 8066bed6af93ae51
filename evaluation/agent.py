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

Here lives the PhysReview protocol's loop (:func:`run_turn`) and its prompt; how a tool call is
executed is :mod:`evaluation.tool_runner`, and what a turn records and the trace it becomes (shared
with the release protocol) is :mod:`evaluation.turn_log`."""

from __future__ import annotations

import json
from typing import Any

from ehr.fhir import tool_schemas
from evaluation.agents.base import Agent, AgentInfraError, AgentReply
from evaluation.dataset import EvalSession, EvalTurn
from evaluation.tool_runner import ToolRunner
from evaluation.turn_log import TurnLog, TurnOutcome

DEFAULT_MAX_STEPS = 16

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
