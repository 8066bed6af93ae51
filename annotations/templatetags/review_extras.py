"""Template helpers for the review screen: readable FHIR observations, tool-call arguments in the contract's
terms, and pretty JSON (always escaped)."""

from __future__ import annotations

import json
from typing import Any

from django import template

from annotations.steps import contract_view
from ehr.fhir.errors import display_tool_error

register = template.Library()

_DATE_KEYS = ("effectiveDateTime", "authoredOn", "onsetDateTime", "recordedDate", "issued", "date", "performedDateTime")


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON as plain text (the template's autoescaping makes it inert)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


@register.filter
def contract_arguments(arguments: Any, tool: Any) -> Any:
    """A call's arguments under the released contract's names: ``{{ s.arguments|contract_arguments:s.tool }}``
    (see :func:`annotations.steps.contract_view`)."""
    return contract_view(tool=tool, arguments=arguments) if isinstance(tool, str) else arguments


# Harness-filled ids: the same in every call of a session, so a one-line summary leaves them out.
_IDS = frozenset({"subject_id", "session_id", "hadm_id"})


@register.filter
def argument_text(arguments: Any, tool: Any) -> str:
    """``name: value`` of a call's contract arguments but the ids, for one line (``query: chest pain``)."""
    shown = contract_arguments(arguments, tool)
    if not isinstance(shown, dict):
        return ""
    return "; ".join(f"{k}: {v}" for k, v in shown.items() if k not in _IDS and v not in (None, ""))


def _concept(value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    if value.get("text"):
        return str(value["text"])
    for coding in value.get("coding") or []:
        if isinstance(coding, dict) and (coding.get("display") or coding.get("code")):
            return str(coding.get("display") or coding.get("code"))
    return ""


def _value(resource: dict[str, Any]) -> str:
    quantity = resource.get("valueQuantity")
    if isinstance(quantity, dict):
        return f"{quantity.get('value', '')} {quantity.get('unit', '')}".strip()
    for key in ("valueString", "valueInteger", "valueBoolean"):
        if key in resource:
            return str(resource[key])
    if "valueCodeableConcept" in resource:
        return _concept(resource["valueCodeableConcept"])
    sections = resource.get("section")
    if isinstance(sections, list):
        return "\n".join(f"{x.get('title', '')}: {x.get('text', '')}" for x in sections if isinstance(x, dict))
    dosage = resource.get("dosageInstruction")
    if isinstance(dosage, list) and dosage and isinstance(dosage[0], dict):
        return str(dosage[0].get("text") or "")
    return ""


def _range(resource: dict[str, Any]) -> str:
    ranges = resource.get("referenceRange")
    if isinstance(ranges, list) and ranges and isinstance(ranges[0], dict):
        low, high = ranges[0].get("low") or {}, ranges[0].get("high") or {}
        if isinstance(low, dict) and isinstance(high, dict) and (low or high):
            return f"{low.get('value', '')}–{high.get('value', '')}"
    return ""


def _row(resource: dict[str, Any]) -> dict[str, str]:
    name = ""
    for key in ("code", "medicationCodeableConcept", "type", "category"):
        candidate = resource.get(key)
        if isinstance(candidate, list):
            candidate = candidate[0] if candidate else None
        name = _concept(candidate)
        if name:
            break
    date = next((str(resource[k]) for k in _DATE_KEYS if resource.get(k)), "")
    return {
        "type": str(resource.get("resourceType", "")),
        "name": name or str(resource.get("id", "")),
        "value": _value(resource),
        "range": _range(resource),
        "date": date,
        "status": str(resource.get("status") or _concept(resource.get("clinicalStatus")) or ""),
    }


@register.filter
def fhir_rows(observation: Any) -> list[dict[str, str]] | None:
    """Key fields of a FHIR resource or searchset Bundle as table rows; None when it is not FHIR-shaped."""
    if not isinstance(observation, dict) or "resourceType" not in observation:
        return None
    if observation.get("resourceType") == "PatientAnswer":
        return None
    if observation.get("resourceType") == "Bundle":
        entries = observation.get("entry") or []
        return [_row(e["resource"]) for e in entries if isinstance(e, dict) and isinstance(e.get("resource"), dict)]
    return [_row(observation)]


@register.filter
def tool_error(observation: Any) -> dict[str, str] | None:
    """``{"error", "hint"}`` of a call the tool layer refused (``ehr.fhir.errors.ToolError``), or None."""
    if (
        isinstance(observation, dict)
        and "resourceType" not in observation
        and isinstance(observation.get("error"), str)
    ):
        error, hint = display_tool_error(error=observation["error"], hint=observation.get("hint"))
        return {
            "error": error,
            "hint": hint,
            # Texts of no known shape stay as the tool wrote them, in English.
            "error_translated": error != observation["error"],
            "hint_translated": hint != str(observation.get("hint") or ""),
        }
    return None


@register.filter
def is_text(value: Any) -> bool:
    return isinstance(value, str)


@register.filter
def patient_answer(value: Any) -> str | None:
    """The text of an agentic patient's answer (``PatientAnswer``), or None."""
    if isinstance(value, dict) and value.get("resourceType") == "PatientAnswer":
        return str(value.get("answer", ""))
    return None
