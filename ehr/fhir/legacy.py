"""Rewriting stored tool calls of earlier versions into the released contract (data migrations, imports).

At run time :func:`ehr.fhir.params.clean_arguments` already accepts old names; stored gold calls,
rubric checks and exports must carry the contract's own names so that the official tooling runs
them. :func:`upgrade_arguments` is pure and idempotent: a call already in the contract comes back
unchanged, so a migration that re-runs it is a no-op.
"""

from __future__ import annotations

from typing import Any

from ehr.fhir.params import Tool
from ehr.fhir.registry import REGISTRY, canonical_name

# Old MedicationRequest.create statuses that the contract expresses through the dose.
_STATUS_DOSE = {"on-hold": "hold", "stopped": "stop", "cancelled": "stop"}


def upgrade_arguments(*, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(contract arguments, leftovers)``: leftovers are old arguments the contract has no place for.

    Names are mapped through the tool's aliases, enum values through its value aliases; values are
    never dropped silently: whatever does not fit is returned so the caller can keep it.
    """
    name = canonical_name(tool)
    if name is None or not isinstance(arguments, dict):
        return arguments, {}
    spec = REGISTRY[name]
    out: dict[str, Any] = {}
    left: dict[str, Any] = {}
    for key, value in arguments.items():
        target = spec.contract_name(key)
        if target is not None and target not in out:
            out[target] = _value(spec, target, value)
        else:
            left[key] = value
    _special(name, out=out, left=left)
    # Keep the contract's parameter order: diffs and exports then read the same everywhere.
    order = [p.name for p in spec.params]
    return {k: out[k] for k in order if k in out}, left


def _value(spec: Tool, param: str, value: Any) -> Any:
    aliases = spec.value_aliases.get(param)
    if aliases and isinstance(value, str):
        return aliases.get(value.strip().lower(), value)
    return value


def _special(name: str, *, out: dict[str, Any], left: dict[str, Any]) -> None:
    """Old shapes that need more than a rename."""
    if name == "MedicationRequest.create" and "dose" not in out and left.get("status") in _STATUS_DOSE:
        out["dose"] = _STATUS_DOSE[left.pop("status")]
    if name == "DocumentReference.search" and out.get("type_code") == "discharge":
        out["type_code"] = "discharge-summary"
    if name == "Flag.create" and "detail" not in out and isinstance(out.get("code"), str):
        out["detail"] = out["code"]  # the old `code` was the alert text itself
    if name == "prepare_to_answer" and "summary" in left and "answer_type" not in out:
        out["answer_type"] = "tool"
