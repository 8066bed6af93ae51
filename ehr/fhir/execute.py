"""The single entry point that runs a tool call: ``execute_tool(name=..., arguments=..., context=...)``.

Whatever the model sends, the caller gets a JSON-serialisable dict back: the FHIR result, or
``{"error": ..., "hint": ...}`` it can read and correct itself from. Nothing here raises.
"""

from __future__ import annotations

import difflib
import json
import logging
from typing import Any

from ehr.fhir.context import ToolContext
from ehr.fhir.errors import ToolError
from ehr.fhir.params import clean_arguments
from ehr.fhir.registry import API_NAMES, REGISTRY, canonical_name

logger = logging.getLogger(__name__)


def parse_arguments(*, tool: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"arguments of {tool} are not valid JSON: {exc.msg} at character {exc.pos}",
                'Send the arguments as one JSON object, e.g. {"patient": 10001234, "code": "creatinine"}.',
            ) from None
    if not isinstance(arguments, dict):
        raise ToolError(
            f"arguments of {tool} must be a JSON object, got {type(arguments).__name__}",
            'Send the arguments as one JSON object, e.g. {"patient": 10001234}.',
        )
    return arguments


def _unknown_tool(name: str) -> ToolError:
    close = difflib.get_close_matches(str(name), [*REGISTRY, *API_NAMES], n=3, cutoff=0.6)
    also = f" Did you mean: {', '.join(close)}?" if close else ""
    return ToolError(f"unknown tool {name!r}", f"Call one of the tools listed in the tool schemas.{also}")


def execute_tool(*, name: str, arguments: dict[str, Any] | str | None, context: ToolContext) -> dict[str, Any]:
    """Run one tool call by canonical (``Observation.search``) or API-safe (``Observation_search``) name."""
    try:
        canonical = canonical_name(name) if isinstance(name, str) else None
        if canonical is None:
            raise _unknown_tool(name)
        tool = REGISTRY[canonical]
        raw = parse_arguments(tool=canonical, arguments=arguments)
        if tool.kind == "patient":
            # The harness knows who the patient is; what the model passed does not matter.
            raw = dict(raw)
            if context.subject_id is not None:
                raw["subject_id"] = context.subject_id
            if context.session_id is not None:
                raw["session_id"] = context.session_id
        args = clean_arguments(
            tool=canonical, params=tool.params, arguments=raw, filled={"patient": context.subject_id}
        )
        return tool.handler(args=args, context=context)
    except ToolError as exc:
        return exc.as_dict()
    except Exception as exc:  # a bug or a database problem must not end the model's turn
        logger.exception("tool %s failed", name)
        return {
            "error": f"{name} failed: {type(exc).__name__}",
            "hint": "This is a problem of the tool, not of your call; try another tool or answer with what you have.",
        }
