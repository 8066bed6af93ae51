"""The wire body and the cache key of one chat-completion request.

Both need the request as JSON: the body for the endpoint, canonical JSON for the key. The tool
schemas are most of those bytes (18 tools, about 18 KB) and identical in every call of a run, so a
*tuple* of tools is renamed to API-safe names and serialised once per client (:class:`ToolsCache`);
a list may be changed by its owner between calls and is prepared on every call. The rest (messages,
parameters) is serialised once, as canonical JSON, and the same text serves the key and the body.

The key is the SHA-256 of the canonical JSON of ``{"v", "endpoint", "base_url", "params",
"extra_body", "salt", "server", "tools_sha256"}``: the tools enter by the hash of their canonical JSON, so a
key covers everything that can change the answer and nothing secret (the API key is a header).
``server`` is the fingerprint of what the endpoint serves (its model list, see
:mod:`core.llm.preflight`), present only when known: another model file or chat template behind
the same URL and model name is another key.
"""

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.llm.toolnames import name_maps, outgoing

CACHE_KEY_VERSION = 2
ENDPOINT = "chat.completions"
_TOOLS_CACHE_SIZE = 8


def canonical_json(value: Any) -> str:
    """Stable JSON: sorted keys, no whitespace, text kept as written (Chinese is not escaped)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class PreparedTools:
    to_api: dict[str, str]  # canonical name -> API-safe name
    to_name: dict[str, str]  # API-safe name -> canonical name
    api_tools: list[dict[str, Any]] | None  # what the endpoint gets (None: no tools sent)
    json: str  # canonical JSON of ``api_tools`` ("" when None)
    sha256: str  # of ``json``; part of the cache key


def prepare_tools(tools: Sequence[dict[str, Any]] | None) -> PreparedTools:
    to_api, to_name = name_maps(tools=tools)
    _, api_tools, _ = outgoing(messages=(), tools=tools, tool_choice=None, to_api=to_api)
    text = canonical_json(api_tools) if api_tools is not None else ""
    return PreparedTools(to_api, to_name, api_tools, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


class ToolsCache:
    """Prepared tools per tuple object (a few entries: one per run language is the common case)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Any, PreparedTools]] = {}
        self._lock = threading.Lock()

    def get(self, tools: Sequence[dict[str, Any]] | None) -> PreparedTools:
        if not isinstance(tools, tuple):
            return prepare_tools(tools)
        entry = self._entries.get(id(tools))
        if entry is not None and entry[0] is tools:  # the object is kept, so its id is not reused
            return entry[1]
        prepared = prepare_tools(tools)
        with self._lock:
            if len(self._entries) >= _TOOLS_CACHE_SIZE:
                self._entries.clear()
            self._entries[id(tools)] = (tools, prepared)
        return prepared


@dataclass(frozen=True)
class WireRequest:
    body: bytes  # the JSON body sent to the endpoint
    key: str  # cache key (hex SHA-256)
    params_json: str  # canonical JSON of the parameters without the tools
    stored: dict[str, Any]  # the request as kept beside a cached response (for audit; the tools in full)


def build_request(
    *,
    params: dict[str, Any],
    tools: PreparedTools,
    base_url: str,
    extra_body: dict[str, Any] | None,
    salt: str,
    server: str = "",
) -> WireRequest:
    """``params``: model, messages (API-safe names) and the other parameters, without ``tools``."""
    params_json = canonical_json(params)
    # Keys in sorted order, so this is canonical_json() of the key dict without serialising params twice.
    server_json = f',"server":{canonical_json(server)}' if server else ""
    key_json = (
        f'{{"base_url":{canonical_json(base_url)},"endpoint":"{ENDPOINT}",'
        f'"extra_body":{canonical_json(extra_body or {})},"params":{params_json},'
        f'"salt":{canonical_json(salt)}{server_json},"tools_sha256":"{tools.sha256}","v":{CACHE_KEY_VERSION}}}'
    )
    body_json = canonical_json({**params, **extra_body}) if extra_body else params_json
    if tools.api_tools is not None:
        body_json = f'{body_json[:-1]},"tools":{tools.json}}}'
    full = {**params, "tools": tools.api_tools} if tools.api_tools is not None else params
    stored = {"endpoint": ENDPOINT, "base_url": base_url, "params": full, "extra_body": extra_body or {}, "salt": salt}
    return WireRequest(
        body=body_json.encode("utf-8"),
        key=hashlib.sha256(key_json.encode("utf-8")).hexdigest(),
        params_json=params_json,
        stored={**stored, "server": server} if server else stored,
    )
