"""A turn's transcript as Inspect events, for ``inspect view``'s Transcript tab (issue 38, item 3).

From the turn's own chat messages (not the earlier turns it carries as context): one ``ModelEvent`` per assistant
message — its input is the conversation up to that call, its output the message — one ``ToolEvent`` per tool
result (the call's function and arguments, the result text, the refusal as its error), then one ``ScoreEvent`` per
score. Every event carries the sample's start time, so exporting the same run twice gives the same log. The
repeated inputs are pooled by ``inspect_ai.log.condense_sample`` (Inspect's own writer does the same).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


def transcript_events(
    *, model: str, messages: list[Any], own_from: int, scores: dict[str, Any], target: str, at: datetime
) -> list[Any]:
    """Events of the messages from index ``own_from`` on (the turn's own), then the scores."""
    from inspect_ai.event import ModelEvent, ScoreEvent, ToolEvent
    from inspect_ai.model import ChatCompletionChoice, GenerateConfig, ModelOutput

    events: list[Any] = []
    calls: dict[str, Any] = {}
    for position, message in enumerate(messages):
        if position < own_from:
            continue
        if message.role == "assistant":
            stop = "tool_calls" if message.tool_calls else "stop"
            output = ModelOutput(model=model, choices=[ChatCompletionChoice(message=message, stop_reason=stop)])
            events.append(
                ModelEvent(
                    timestamp=at,
                    model=model,
                    input=messages[:position],
                    tools=[],
                    tool_choice="auto",
                    config=GenerateConfig(),
                    output=output,
                )
            )
            calls.update({call.id: call for call in message.tool_calls or []})
        elif message.role == "tool":
            call = calls.get(message.tool_call_id)
            events.append(
                ToolEvent(
                    timestamp=at,
                    id=message.tool_call_id or "",
                    function=call.function if call else (message.function or ""),
                    arguments=call.arguments if call else {},
                    result=message.text,
                    error=message.error,
                )
            )
    events.extend(ScoreEvent(timestamp=at, score=score, target=target, scorer=name) for name, score in scores.items())
    return events
