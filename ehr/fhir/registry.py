"""The tool registry: lookup by canonical or API-safe name, schemas per language, schema hash.

Names are the benchmark's canonical dotted names (data, rubrics and exports use them). OpenAI-style
APIs only accept ``^[a-zA-Z0-9_-]{1,64}$``, so :func:`api_name` / :func:`canonical_name` map them.
Declarations live in :mod:`ehr.fhir.definitions`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ehr.fhir.definitions import TOOLS
from ehr.fhir.params import Tool, api_name

LANGUAGES = ("en", "zh")
API_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

REGISTRY: dict[str, Tool] = {t.name: t for t in TOOLS}
TOOL_NAMES: tuple[str, ...] = tuple(REGISTRY)


API_NAMES: dict[str, str] = {api_name(n): n for n in TOOL_NAMES}
assert len(API_NAMES) == len(TOOL_NAMES), "two tools map to the same API-safe name"
# Single-underscore names (``Observation_search``) were our API-safe names before the release's ``__``.
_LEGACY_API_NAMES: dict[str, str] = {n.replace(".", "_"): n for n in TOOL_NAMES}


def canonical_name(name: str) -> str | None:
    """Canonical name for a canonical or API-safe name (``__``, or the older ``_``); ``None`` if none has it."""
    if name in REGISTRY:
        return name
    return API_NAMES.get(name) or _LEGACY_API_NAMES.get(name)


def tool_schemas(
    *, language: str, api_safe_names: bool = False, names: tuple[str, ...] | None = None
) -> list[dict[str, Any]]:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    chosen = TOOLS if names is None else tuple(REGISTRY[n] for n in names)
    return [t.schema(language=language, api_safe_names=api_safe_names) for t in chosen]


def schema_hash(*, language: str | None = None) -> str:
    """SHA-256 of the canonical JSON of the schemas (both languages unless one is given); for run manifests."""
    languages = LANGUAGES if language is None else (language,)
    payload = {lang: tool_schemas(language=lang) for lang in languages}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
