"""Patient tools: declared here, answered by whatever the scenarios app registers.

``ehr`` may not import ``scenarios`` (dependencies point one way), so the answering side plugs in
through :func:`register_patient_responder`. Until it does, the tools return a readable error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ehr.fhir.common import require_patient
from ehr.fhir.context import ToolContext
from ehr.fhir.errors import ToolError


class PatientResponder(Protocol):
    def __call__(self, *, tool: str, arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]: ...


_responder: PatientResponder | None = None


def register_patient_responder(responder: PatientResponder | Callable[..., dict[str, Any]] | None) -> None:
    """Install the function answering ``patient.*`` tools (``None`` removes it, e.g. in tests)."""
    global _responder
    _responder = responder


def patient_responder() -> PatientResponder | None:
    return _responder


def make_patient_handler(tool: str) -> Callable[..., dict[str, Any]]:
    def handler(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        require_patient(subject_id=args["subject_id"])
        if _responder is None:
            raise ToolError.of("no_patient", "use_ehr", tool=tool)
        return _responder(tool=tool, arguments={k: v for k, v in args.items() if v is not None}, context=context)

    return handler
