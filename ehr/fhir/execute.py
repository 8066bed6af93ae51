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
from ehr.fhir.params import COMMON_ALIASES, clean_arguments
from ehr.fhir.registry import API_NAMES, REGISTRY, canonical_name

logger = logging.getLogger(__name__)
# The names a patient tool's patient/admission may come under (the harness's values replace them).
PATIENT_SCOPE_NAMES = frozenset({"subject_id", "session_id", *COMMON_ALIASES})
_SUBJECT_NAMES = frozenset({"subject_id", *(k for k, v in COMMON_ALIASES.items() if v == "subject_id")})
_ADMISSION_NAMES = PATIENT_SCOPE_NAMES - _SUBJECT_NAMES - {"session_id"}


def parse_arguments(*, tool: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolError.of("not_json", "json_code", tool=tool, msg=exc.msg, pos=exc.pos) from None
    if not isinstance(arguments, dict):
        raise ToolError.of("not_object", "json_object", tool=tool, got=type(arguments).__name__)
    return arguments


def _unknown_tool(name: str) -> ToolError:
    close = difflib.get_close_matches(str(name), [*REGISTRY, *API_NAMES], n=3, cutoff=0.6)
    return ToolError.of("unknown_tool", "tool_close" if close else "tool", given=repr(name), names=", ".join(close))


def _patient_scope(*, raw: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Where the harness knows the patient and session, what the model passed for them does not matter;
    where it does not (e.g. ``manage.py ehr_tool`` without ``--subject-id``), the model's values stand."""
    out = {k: v for k, v in raw.items() if k not in _ADMISSION_NAMES}
    if context.subject_id is not None:
        out = {k: v for k, v in out.items() if k not in _SUBJECT_NAMES}
        out["subject_id"] = context.subject_id
    if context.session_id is not None:
        out["session_id"] = context.session_id
    return out


def execute_tool(*, name: str, arguments: dict[str, Any] | str | None, context: ToolContext) -> dict[str, Any]:
    """Run one tool call by canonical (``Observation.search``) or API-safe (``Observation__search``) name.

    Arguments the contract does not know are dropped and named in the result's ``warnings``.
    """
    warnings: tuple[str, ...] = ()
    try:
        canonical = canonical_name(name) if isinstance(name, str) else None
        if canonical is None:
            raise _unknown_tool(name)
        tool = REGISTRY[canonical]
        raw = parse_arguments(tool=canonical, arguments=arguments)
        if tool.kind == "patient":
            raw = _patient_scope(raw=raw, context=context)
        cleaned = clean_arguments(tool=tool, arguments=raw, filled={"subject_id": context.subject_id})
        warnings = cleaned.warnings
        result = tool.handler(args=cleaned.args, context=context.for_tool(canonical))
    except ToolError as exc:
        result = exc.as_dict()
    except Exception as exc:  # a bug or a database problem must not end the model's turn
        logger.exception("tool %s failed", name)
        result = {
            "error": f"{name} failed: {type(exc).__name__}",
            "hint": "This is a problem of the tool, not of your call; try another tool or answer with what you have.",
        }
    if warnings:
        result = {**result, "warnings": list(warnings)}
    return result
