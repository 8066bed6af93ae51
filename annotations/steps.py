"""Re-executing an edited gold tool call, so the reviewer sees (and the turn stores) what it returns.

EHR reads and simulated writes are re-run against the record with the session's context (same date
cutoff as generation). Patient tools are not: their answers are the reviewed gold patient replies,
replayed during evaluation, so an argument edit there keeps the stored observation.

Edited arguments are stored in the released tool contract's terms (:func:`contract_arguments`), so the
official tooling can run the curated calls: a reviewer may type an alias (``patient``, ``symptom``)
or an old enum value and it is stored under the contract's name; a name the contract has no place
for is refused, naming what the tool takes.
"""

from __future__ import annotations

from typing import Any

from ehr.fhir import REGISTRY, ToolContext, canonical_name, execute_tool
from ehr.fhir.legacy import upgrade_arguments
from ehr.fhir.params import is_placeholder
from scenarios.models import Session

RERUNNABLE_KINDS = ("ehr", "write")


def rerunnable(tool: str) -> bool:
    return tool in REGISTRY and REGISTRY[tool].kind in RERUNNABLE_KINDS


def rerun_step(*, session: Session, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The observation of ``tool(arguments)`` in the session's context, or None if it is not re-run.
    Tool errors come back as ``{"error", "hint"}`` (the quality gates flag them)."""
    if not rerunnable(tool):
        return None
    return execute_tool(name=tool, arguments=arguments, context=ToolContext.for_session(session))


def contract_view(*, tool: str, arguments: Any) -> Any:
    """What a stored call runs with, under the contract's names: data of an earlier version
    (``patient``, ``symptom``…) reads as the call now runs; names the contract has no place for are
    left out (the tool would drop them). For display; see :func:`contract_arguments` for storing."""
    if not isinstance(arguments, dict) or canonical_name(tool) is None:
        return arguments
    return upgrade_arguments(tool=tool, arguments=arguments)[0]


class ArgumentsOutsideContract(ValueError):
    """Edited arguments name parameters the tool's contract does not have; the message names them."""


def contract_arguments(*, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` under the contract's names and values, placeholders of optional parameters left out.

    Raises :class:`ArgumentsOutsideContract` for names the tool does not take (not silently dropped:
    the reviewer meant something by them). A tool outside the registry keeps its arguments.
    """
    name = canonical_name(tool)
    if name is None:
        return arguments
    spec = REGISTRY[name]
    upgraded, left = upgrade_arguments(tool=name, arguments=arguments)
    if left:
        raise ArgumentsOutsideContract(
            f"{name} takes no {'argument' if len(left) == 1 else 'arguments'} {', '.join(sorted(left))}; "
            f"it takes: {', '.join(p.name for p in spec.params)}"
        )
    optional = {p.name for p in spec.params if not p.required}
    return {k: v for k, v in upgraded.items() if not (k in optional and is_placeholder(v))}
