"""The conversation of a stored turn as the model saw it, as Inspect AI chat messages.

While a run plays, :mod:`evaluation.jobs` gives each turn the protocol's opening messages and what the
earlier turns of the same play added to the history; a stored trace keeps only the turn's own messages.
Here the history is rebuilt the same way (opening messages from the run's snapshot or the database rows,
earlier turns through :func:`evaluation.jobs.played_history`) and the OpenAI-shaped messages become
``inspect_ai.model`` messages: tool calls with their arguments, tool results with the function they answer.
"""

from __future__ import annotations

import json
from typing import Any

from evaluation.dataset import EvalSession
from evaluation.models import EvalRun, TurnResult


def run_protocol(run: EvalRun) -> str:
    from evaluation.protocols import DEFAULT_PROTOCOL

    return ((run.manifest or {}).get("parameters") or {}).get("protocol") or DEFAULT_PROTOCOL


class RunSessions:
    """The run's sessions (for the opening messages and gold answers), loaded once each: from the run's
    snapshot when it has one, else the database rows; ``None`` when neither has the session any more."""

    def __init__(self, *, run: EvalRun) -> None:
        self.dataset = (run.manifest or {}).get("dataset") or {}
        self.cache: dict[str, EvalSession | None] = {}

    def get(self, session_id: str) -> EvalSession | None:
        if session_id not in self.cache:
            self.cache[session_id] = self._load(session_id)
        return self.cache[session_id]

    def _load(self, session_id: str) -> EvalSession | None:
        from annotations.models import SnapshotItem
        from evaluation.dataset import session_from_model, session_from_record
        from scenarios.models import Session

        row = Session.objects.filter(session_id=session_id).prefetch_related("turns__steps", "turns__rubric_items")
        session = row.first()
        if self.dataset.get("source") == "snapshot" and self.dataset.get("snapshot_id") and session is not None:
            item = SnapshotItem.objects.filter(snapshot_id=self.dataset["snapshot_id"], record_id=session.record_id)
            frozen = item.only("record_json").first()
            if frozen is not None:
                return session_from_record(json.loads(frozen.record_json))
        return session_from_model(session) if session is not None else None


def opening_messages(*, session: EvalSession | None, language: str, protocol: str) -> list[dict[str, Any]]:
    if session is None:
        return []
    if protocol == "release":
        from evaluation.protocols.release import session_history as release_history

        return release_history(session=session, language=language)
    from evaluation.agent import session_history

    return session_history(session=session, language=language)


def with_history(results: list[TurnResult], *, protocol: str, sessions: RunSessions) -> list[tuple[TurnResult, list]]:
    """Each result with the messages the model had before its turn began (opening + earlier turns), rebuilt
    as :mod:`evaluation.jobs` builds them while playing (results come ordered by job, then turn)."""
    from evaluation.jobs import played_history

    out: list[tuple[TurnResult, list]] = []
    job: tuple[Any, ...] | None = None
    history: list[dict[str, Any]] = []
    for result in results:
        key = (result.session_id, result.language, result.variant, result.trial)
        if key != job:
            job = key
            history = opening_messages(
                session=sessions.get(result.session_id), language=result.language, protocol=protocol
            )
        out.append((result, list(history)))
        if not result.infra_error:
            history += played_history(result.trace, release=protocol == "release")
    return out


CHAT_ROLES = frozenset({"system", "user", "assistant", "tool"})  # the roles chat_messages converts (others dropped)


def converted_count(messages: list[dict[str, Any]]) -> int:
    """How many chat messages :func:`chat_messages` makes of these: where a turn's own messages start."""
    return sum(m.get("role") in CHAT_ROLES for m in messages)


def chat_messages(*, run: EvalRun, history: list[dict[str, Any]], trace: dict[str, Any]) -> list[Any]:
    """OpenAI-shaped messages as Inspect chat messages; tool results carry their function and an error
    when the tool layer refused the call (invalid arguments, unknown tool)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    records = {c.get("id"): c for step in trace.get("steps") or [] for c in step.get("calls") or [] if c.get("id")}
    names: dict[str, str] = {}
    out: list[Any] = []
    for message in [*history, *(trace.get("messages") or [])]:
        role, content = message.get("role"), _text(message.get("content"))
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id", "")] = str(function.get("name", ""))
                arguments, parse_error = _arguments(function.get("arguments"), records.get(call.get("id")))
                calls.append(
                    ToolCall(
                        id=str(call.get("id", "")),
                        function=str(function.get("name", "")),
                        arguments=arguments,
                        parse_error=parse_error,
                    )
                )
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None, model=run.model))
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            record = records.get(call_id) or {}
            error = None
            if record.get("invalid") or record.get("skipped"):
                error = ToolCallError(type="limit" if record.get("skipped") else "unknown", message=content[:500])
            out.append(
                ChatMessageTool(
                    content=content,
                    tool_call_id=call_id,
                    function=names.get(call_id) or record.get("name"),
                    error=error,
                )
            )
    return out


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _arguments(raw: Any, record: dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """The call's arguments as the trace recorded them (the raw text when they were not JSON)."""
    if record is not None and record.get("parse_error"):
        return {}, f"{record['parse_error']} (raw: {str(record.get('arguments_raw', ''))[:500]})"
    if record is not None and isinstance(record.get("arguments"), dict):
        return record["arguments"], None
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        return {}, str(exc)
    return (parsed, None) if isinstance(parsed, dict) else ({}, None)
