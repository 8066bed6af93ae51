"""Re-executing an edited gold tool call, so the reviewer sees (and the turn stores) what it returns.

EHR reads and simulated writes are re-run against the record with the session's context (same date
cutoff as generation). Patient tools are not: their answers are the reviewed gold patient replies,
replayed during evaluation, so an argument edit there keeps the stored observation.
"""

from __future__ import annotations

from typing import Any

from ehr.fhir import REGISTRY, ToolContext, execute_tool
from scenarios.models import Session

RERUNNABLE_KINDS = ("ehr", "write")


def tool_context(*, session: Session) -> ToolContext:
    return ToolContext(
        current_date=session.current_date,
        subject_id=session.subject_id,
        hadm_id=session.hadm_id,
        session_id=session.session_id,
    )


def rerunnable(tool: str) -> bool:
    return tool in REGISTRY and REGISTRY[tool].kind in RERUNNABLE_KINDS


def rerun_step(*, session: Session, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The observation of ``tool(arguments)`` in the session's context, or None if it is not re-run.
    Tool errors come back as ``{"error", "hint"}`` (the quality gates flag them)."""
    if not rerunnable(tool):
        return None
    return execute_tool(name=tool, arguments=arguments, context=tool_context(session=session))
