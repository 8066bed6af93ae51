"""Canonical tool names ⇄ API-safe names.

The benchmark's tool names are dotted (``Observation.search``), but OpenAI-style APIs only accept
function names matching ``^[a-zA-Z0-9_-]{1,64}$``. Names are mapped on the way out (tools,
tool_choice, earlier assistant tool calls in the history) and back on the way in. The map is the
released PhysAssistBench one: a dot becomes ``__`` (``Observation__search``,
``patient__get_symptom_history``); any other character outside the set becomes ``_``.
"""

import copy
import re
from collections.abc import Sequence
from typing import Any

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def api_safe_name(name: str) -> str:
    return _UNSAFE.sub("_", name.replace(".", "__"))[:64]


def name_maps(*, tools: Sequence[dict[str, Any]] | None) -> tuple[dict[str, str], dict[str, str]]:
    """``(canonical -> api, api -> canonical)`` for the tools of one request; rejects collisions."""
    to_api: dict[str, str] = {}
    to_name: dict[str, str] = {}
    for tool in tools or ():
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError("every tool needs a function name")
        api = api_safe_name(name)
        if api in to_name and to_name[api] != name:
            raise ValueError(f"tool names {to_name[api]!r} and {name!r} both map to the API name {api!r}")
        to_api[name], to_name[api] = api, name
    return to_api, to_name


def outgoing(
    *,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None,
    tool_choice: Any,
    to_api: dict[str, str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, Any]:
    """Messages, tools and tool_choice with canonical names replaced by API-safe names.

    Only the dicts that carry a name are copied (the caller's objects are never changed); the rest,
    e.g. the tool parameter schemas and message texts, is shared, since a deep copy of every
    message and schema on every call costs more than the HTTP request itself.
    """

    def rename(name: Any) -> Any:
        return to_api.get(name, api_safe_name(name)) if isinstance(name, str) else name

    def renamed_function(holder: Any) -> Any:
        if not isinstance(holder, dict) or not isinstance(holder.get("function"), dict):
            return copy.deepcopy(holder)
        function = {**holder["function"], "name": rename(holder["function"].get("name"))}
        return {**holder, "function": function}

    out_tools = None if tools is None else [renamed_function(tool) for tool in tools]
    out_messages = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if isinstance(calls, list):
            message = {**message, "tool_calls": [renamed_function(call) for call in calls]}
        out_messages.append(message)
    out_choice = renamed_function(tool_choice) if isinstance(tool_choice, dict) else tool_choice
    return out_messages, out_tools, out_choice
