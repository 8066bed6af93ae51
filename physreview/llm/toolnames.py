"""Canonical tool names ⇄ API-safe names.

The benchmark's tool names are dotted (``Observation.search``), but OpenAI-style APIs only accept
function names matching ``^[a-zA-Z0-9_-]{1,64}$``. Names are mapped on the way out (tools,
tool_choice, earlier assistant tool calls in the history) and back on the way in.
"""

import copy
import re
from collections.abc import Sequence
from typing import Any

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def api_safe_name(name: str) -> str:
    return _UNSAFE.sub("_", name)[:64]


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
    """Copies of messages, tools and tool_choice with canonical names replaced by API-safe names."""

    def rename(name: Any) -> Any:
        return to_api.get(name, api_safe_name(name)) if isinstance(name, str) else name

    out_tools = None
    if tools is not None:
        out_tools = copy.deepcopy(list(tools))
        for tool in out_tools:
            tool["function"]["name"] = rename(tool["function"]["name"])
    out_messages = copy.deepcopy(list(messages))
    for message in out_messages:
        for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                call["function"]["name"] = rename(call["function"].get("name"))
    out_choice = copy.deepcopy(tool_choice)
    if isinstance(out_choice, dict) and isinstance(out_choice.get("function"), dict):
        out_choice["function"]["name"] = rename(out_choice["function"].get("name"))
    return out_messages, out_tools, out_choice
