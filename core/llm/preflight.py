"""Before a run: what does the endpoint serve? The model name checked against ``GET /models`` and a
fingerprint of the served model for the manifest and the response-cache key.

The fingerprint is the SHA-256 of the canonical JSON of the served entry of the requested model (its
``id``, ``owned_by``, llama.cpp's ``meta``, vLLM's ``root``/``max_model_len``...) without the
fields a server fills in per request (``created``, ``permission``), plus, from a llama.cpp server,
the chat template and model path its ``/props`` reports. A new model file or template behind the same
URL and model name therefore gets other cache keys, while the list of *other* models a hosted API
serves does not matter. An endpoint without a model list (``404``/``405``/``501``) is not an error:
the fingerprint is then empty and the cache key as before.

llama.cpp also reports whether its chat template renders tools (``chat_template_caps.supports_tools``):
a template without tool support drops the tool list from the prompt without an error (seen with
SmolLM2's template: a 218-token prompt where the 18 schemas alone take ~5k), so a caller that sends
tools can refuse such a server up front (:func:`require_tools`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from core.llm.config import display_url
from core.llm.errors import LLMConfigError
from core.llm.request import canonical_json

if TYPE_CHECKING:
    from core.llm.client import LLMClient

PROBE_TIMEOUT_S = 10.0
_NO_LIST = {400, 404, 405, 501}
_VOLATILE = {"created", "permission"}
_PROPS_KEYS = ("chat_template", "model_path", "build_info")
_SHOWN = 30


@dataclass(frozen=True, kw_only=True)
class ServerInfo:
    models: tuple[str, ...] | None  # served model ids; None: the endpoint has no model list
    entry: dict[str, Any] | None  # the requested model's entry, volatile fields removed
    template_sha256: str  # llama.cpp /props chat template hash ("" if not reported)
    fingerprint: str  # "" when nothing is known about the server
    supports_tools: bool | None = None  # llama.cpp: does the chat template render tools? None: not reported

    def as_dict(self) -> dict[str, Any]:
        return {
            "models": list(self.models) if self.models is not None else None,
            "model_entry": self.entry,
            "chat_template_sha256": self.template_sha256 or None,
            "fingerprint": self.fingerprint or None,
            "supports_tools": self.supports_tools,
        }


def server_info(*, client: LLMClient) -> ServerInfo:
    """Ask the endpoint what it serves (one GET each, no retries). Raises :class:`LLMConfigError` when
    the endpoint refuses the key (401/403) or the model is not among the served ones."""
    config = client.config
    status, body = client.get_json(path="models", timeout_s=min(PROBE_TIMEOUT_S, config.timeout_s))
    if status in {401, 403}:
        raise LLMConfigError(
            f"LLM role {config.role!r}: {display_url(config.base_url)} refused the API key "
            f"(HTTP {status} on GET /models); check {config.api_key_env}."
        )
    models, entries = _model_list(body) if status == 200 else (None, {})
    if models is not None and config.model not in models:
        shown = ", ".join(models[:_SHOWN]) + (f" … ({len(models)} in all)" if len(models) > _SHOWN else "")
        raise LLMConfigError(
            f"LLM role {config.role!r}: model {config.model!r} is not served by {display_url(config.base_url)}; "
            f"it serves: {shown or 'no model'}. Pass one of these names (llama-server: the file name, or --alias)."
        )
    entry = entries.get(config.model or "")
    template, supports_tools = _template(client) if models is not None else ("", None)
    known = {"entry": entry, "template": template} if entry is not None or template else None
    fingerprint = hashlib.sha256(canonical_json(known).encode()).hexdigest() if known else ""
    return ServerInfo(
        models=models, entry=entry, template_sha256=template, fingerprint=fingerprint, supports_tools=supports_tools
    )


def preflight(*, client: LLMClient) -> ServerInfo:
    """:func:`server_info`, and the fingerprint set on the client (its cache keys then include it)."""
    info = server_info(client=client)
    client.server_fingerprint = info.fingerprint
    return info


def _model_list(body: object) -> tuple[tuple[str, ...] | None, dict[str, dict[str, Any]]]:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None, {}
    entries: dict[str, dict[str, Any]] = {}
    for item in data:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            entries[item["id"]] = {k: v for k, v in item.items() if k not in _VOLATILE}
    return tuple(sorted(entries)), entries


def require_tools(*, client: LLMClient, info: ServerInfo) -> None:
    """Raise :class:`LLMConfigError` when the server says its chat template cannot render tools."""
    if info.supports_tools is False:
        raise LLMConfigError(
            f"LLM role {client.config.role!r}: the chat template of {display_url(client.config.base_url)} does not "
            f"render tools (llama.cpp /props: chat_template_caps.supports_tools = false), so {client.config.model!r} "
            "would never see the EHR and patient tools. Start llama-server with --jinja and a tool-capable "
            "template (--chat-template-file) or use a model whose template has tools."
        )


def _template(client: LLMClient) -> tuple[str, bool | None]:
    """llama.cpp's ``/props`` (next to ``/v1``): its chat template and model path, hashed, and whether the
    template renders tools."""
    parts = urlsplit(client.config.base_url)
    root = parts.path.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    url = urlunsplit((parts.scheme, parts.netloc, f"{root}/props", "", ""))
    status, body = client.get_json(path=url, timeout_s=min(PROBE_TIMEOUT_S, client.config.timeout_s))
    if status != 200 or not isinstance(body, dict):
        return "", None
    props = {key: body.get(key) for key in _PROPS_KEYS if body.get(key) is not None}
    caps = body.get("chat_template_caps")
    tools = caps.get("supports_tools") if isinstance(caps, dict) else None
    return (
        hashlib.sha256(canonical_json(props).encode()).hexdigest() if props else "",
        tools if isinstance(tools, bool) else None,
    )
