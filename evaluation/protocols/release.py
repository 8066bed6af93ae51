"""``runeval --protocol release``: one turn as the released PhysAssistBench runner plays it.

Messages: a system prompt (role, tool use by task type, prepare_to_answer last, session_id to the
patient tools), a user message ``[Environment Info]`` with the record's ``env_info``, ``subject_id``
and ``hadm_id``, an assistant acknowledgement, then the turns' requests. The model keeps its whole
history, tool calls and results included. Every step offers the session's own stored schemas (the
run's language; the record's own ``prepare_to_answer``, else one without parameters), ``tool_choice="auto"``; at most
:data:`~evaluation.protocols.RELEASE_MAX_STEPS` model steps (several calls per step). Tool results
reach the model as compact text (:mod:`.compact`). A turn that ends without text (after
``prepare_to_answer``, after the last step, or an empty reply) gets the final nudge: the plain
"answer now" request with ``tool_choice="none"``, retried while the reply stays empty (at most
:data:`NUDGE_ATTEMPTS` calls, as the release does), and not kept in the history.

The system prompt states the instructions of the one the released ``run_eval.py`` passes (its second
version) in our own words; the other texts follow the release's structure in our words.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ehr.fhir import tool_schemas
from evaluation.agent import _assistant_message
from evaluation.agents.base import Agent, AgentInfraError, AgentReply
from evaluation.dataset import EvalSession, EvalTurn
from evaluation.protocols import RELEASE_MAX_STEPS
from evaluation.protocols.compact import compact_observation
from evaluation.tool_runner import ToolRunner
from evaluation.turn_log import TurnLog, TurnOutcome

PROMPT_VERSION = "release-runner-2"  # 2: the prompt the released run_eval.py passes (issue 33)
NUDGE_ATTEMPTS = 3
# The instructions of the system prompt the released runner is given (run_eval.py's second version), in our words.
SYSTEM_PROMPT = {
    "en": (
        "You are a clinical decision-support agent working with a physician in a hospital or ICU. You have EHR "
        "tools for the patient's structured record and tools to interview the patient.\n\n"
        "- Gather with the tools whatever the physician's question needs; never ask the physician for data you can "
        "look up yourself.\n"
        "- Choose the tools and how many to call on your own: as many as the question needs, then stop.\n"
        "- Give the patient tools the session_id from the environment info.\n"
        "- When a question is implicit or elliptic, work out what it refers to from the conversation so far before "
        "you act.\n"
        "- Answer briefly but completely: the relevant values with their units and whether they are normal or "
        "abnormal, and the clinical conclusion or recommendation the question asks for.\n"
        "- Call prepare_to_answer as your last action before you answer."
    ),
    "zh": (
        "你是一名临床决策支持助手，在医院或ICU中与医生合作。你有查询患者结构化病历的EHR工具，以及询问患者的工具。\n\n"
        "- 用工具获取医生问题所需的信息；能自己查到的数据不要向医生索取。\n"
        "- 自行决定调用哪些工具、调用几个：问题需要多少就调用多少，然后停止。\n"
        "- 调用患者工具时传入环境信息中的session_id。\n"
        "- 问题隐含或省略时，先根据此前的对话弄清所指，再行动。\n"
        "- 回答简短而完整：给出相关数值及单位、是否正常，以及问题所要的临床结论或建议。\n"
        "- 回答前的最后一个操作调用prepare_to_answer。"
    ),
}
ENVIRONMENT = {
    "en": (
        "[Environment Info]\n{env_info}\nsubject_id: {subject_id}\nhadm_id: {hadm_id}\n\n"
        "You are now assisting with this clinical case. The tasks will come one at a time."
    ),
    "zh": (
        "[环境信息]\n{env_info}\nsubject_id: {subject_id}\nhadm_id: {hadm_id}\n\n"
        "现在请你协助处理这个临床病例，任务会逐一给出。"
    ),
}
ACKNOWLEDGEMENT = {
    "en": "Understood. I am ready to assist with this clinical case; please give me the first task.",
    "zh": "好的，我已准备好协助处理这个临床病例，请给出第一个任务。",
}
NUDGE = {
    "en": "Using the information gathered so far, give your final answer now in plain text. Do not call any tools.",
    "zh": "请根据目前已获取的信息，现在用纯文本给出你的最终回答，不要再调用任何工具。",
}
PREPARE_TO_ANSWER = {
    "en": "Call this when you have gathered everything you need and are ready to answer.",
    "zh": "已收集到所需的全部信息、准备回答时调用。",
}
PROMPT_HASH = hashlib.sha256(
    json.dumps(
        [PROMPT_VERSION, SYSTEM_PROMPT, ENVIRONMENT, ACKNOWLEDGEMENT, NUDGE, PREPARE_TO_ANSWER],
        ensure_ascii=False,
        sort_keys=True,
    ).encode("utf-8")
).hexdigest()


def prepare_to_answer_schema(language: str) -> dict[str, Any]:
    """``prepare_to_answer`` as the release offers it at evaluation: no parameters."""
    return {
        "type": "function",
        "function": {
            "name": "prepare_to_answer",
            "description": PREPARE_TO_ANSWER[language],
            "parameters": {"type": "object", "properties": {}, "required": []},
        },
    }


def _name(schema: Any) -> str:
    function = schema.get("function") if isinstance(schema, dict) else None
    return str((function or {}).get("name", ""))


def release_tools(*, session: EvalSession, language: str) -> tuple[dict[str, Any], ...]:
    """The session's stored schemas in ``language`` (the contract's when none are stored), first of each
    name kept. The record's own ``prepare_to_answer`` (with ``answer_type``) wins the de-duplication, as in
    the released runner (semantics file, corrections); a record without one gets the parameterless one at
    the end. A tuple: the LLM client prepares it once (build it once per job)."""
    stored = list(session.tool_schemas(language)) or tool_schemas(language=language)
    seen: set[str] = set()
    out = []
    for schema in stored:
        name = _name(schema)
        if name in seen:
            continue
        seen.add(name)
        out.append(schema)
    if "prepare_to_answer" not in seen:
        out.append(prepare_to_answer_schema(language))
    return tuple(out)


def session_history(*, session: EvalSession, language: str) -> list[dict[str, Any]]:
    environment = ENVIRONMENT[language].format(
        env_info=session.env_info, subject_id=session.subject_id, hadm_id=session.hadm_id
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT[language]},
        {"role": "user", "content": environment},
        {"role": "assistant", "content": ACKNOWLEDGEMENT[language]},
    ]


def run_release_turn(
    *,
    agent: Agent,
    session: EvalSession,
    turn: EvalTurn,
    history: list[dict[str, Any]],
    runner: ToolRunner,
    tools: tuple[dict[str, Any], ...],
    language: str,
    variant: str,
    trial: int,
    max_steps: int = RELEASE_MAX_STEPS,
) -> TurnOutcome:
    """One turn; ``history``: the opening messages and every earlier turn's messages (the trace's
    ``messages`` are this turn's, nudge left out, to extend it with)."""
    log = TurnLog(agent, session, turn, history, tools, language=language, variant=variant, trial=trial)
    messages, errors = log.messages, log.errors
    observations: list[Any] = []
    end_reason, answer, infra_error = "", "", ""

    def ask(stage: str, step: int, sent: list[dict[str, Any]]) -> AgentReply:
        choice = "none" if stage == "final" else "auto"
        # What the tools returned, uncompacted (the rules baselines read it; models see the text).
        return log.ask(
            stage=stage, step=step, messages=sent, tool_choice=choice, extra={"observations": list(observations)}
        )

    try:
        end_reason = "step_limit"
        for step in range(max_steps):
            reply = ask("step", step, messages)
            step_trace = log.step(reply)
            if not reply.tool_calls:
                answer = reply.content or ""
                messages.append({"role": "assistant", "content": answer})
                end_reason = "answer" if answer.strip() else "empty_answer"
                break
            messages.append(_assistant_message(reply))
            ready = False
            for call in reply.tool_calls:
                record = log.call(runner=runner, call=call, step_trace=step_trace)
                observations.append({"tool": record["name"], "observation": record["observation"]})
                text = compact_observation(tool=str(record["name"]), observation=record["observation"])
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                ready = ready or record["name"] == "prepare_to_answer"
            if ready:
                end_reason = "prepare_to_answer"
                # A reply that calls prepare_to_answer may carry the answer itself.
                answer = (reply.content or "").strip()
                break
        if answer.strip() and end_reason != "answer":
            messages.append({"role": "assistant", "content": answer})
        elif not answer.strip():
            nudged = [*messages, {"role": "user", "content": NUDGE[language]}]
            for attempt in range(NUDGE_ATTEMPTS):
                final = ask("final", len(log.steps), nudged)
                log.final(final, nudge=NUDGE[language])
                answer = final.content or ""
                if answer.strip():
                    break
                errors.append({"kind": "empty_final_answer", "attempt": attempt + 1})
            if answer.strip():
                messages.append({"role": "assistant", "content": answer})
    except AgentInfraError as exc:
        end_reason, infra_error = log.infra_error(exc)
    return log.outcome(answer=answer, end_reason=end_reason, infra_error=infra_error)
