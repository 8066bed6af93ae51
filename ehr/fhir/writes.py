"""Simulated write tools and ``prepare_to_answer``.

Writes are checked like a real order entry would (patient, encounter, required fields) and answer
with the resource that *would* be created, marked ``"_simulated": true``. They never touch the
database: the record is the benchmark's ground truth and must stay as imported.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ehr.fhir.common import concept, drop_none, ref, require_patient
from ehr.fhir.context import ToolContext
from ehr.fhir.errors import ToolError


def _sim_id(kind: str, args: dict[str, Any], context: ToolContext) -> str:
    """Deterministic id: the same call in the same session gets the same id (stable replays)."""
    payload = json.dumps(
        {"a": args, "d": context.current_date.isoformat(), "s": context.session_id}, sort_keys=True, default=str
    )
    return f"sim-{kind.lower()}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def _scope(*, args: dict[str, Any], context: ToolContext) -> int | None:
    """The write goes to the session's admission when the patient is the session's (the contract has no hadm_id)."""
    require_patient(subject_id=args["subject_id"])
    if context.hadm_id is not None and context.subject_id == args["subject_id"]:
        return context.hadm_id
    return None


def _common(kind: str, *, args: dict[str, Any], context: ToolContext, encounter: int | None) -> dict[str, Any]:
    return {
        "resourceType": kind,
        "id": _sim_id(kind, args, context),
        "_simulated": True,
        "subject": ref("Patient", args["subject_id"]),
        "encounter": ref("Encounter", encounter) if encounter is not None else None,
    }


# A dose that is an instruction rather than an amount: the order holds or stops the drug.
_DOSE_STATUS = {"hold": "on-hold", "held": "on-hold", "on hold": "on-hold", "stop": "stopped", "discontinue": "stopped"}


def medication_request_status(dose: str) -> str:
    return _DOSE_STATUS.get(dose.strip().lower(), "active")


def medication_request_create(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    encounter = _scope(args=args, context=context)
    status = medication_request_status(args["dose"])
    dosage = drop_none(
        {
            "text": " ".join(str(args[k]) for k in ("dose", "route", "frequency")),
            "route": concept(args["route"]),
            "timing": {"code": {"text": args["frequency"]}},
            "doseAndRate": [{"doseQuantity": {"unit": args["dose"]}}] if status == "active" else None,
        }
    )
    return drop_none(
        {
            **_common("MedicationRequest", args=args, context=context, encounter=encounter),
            "status": status,
            "intent": "order",
            "medicationCodeableConcept": {"text": args["medication"]},
            "authoredOn": context.current_date.isoformat(),
            "dosageInstruction": [dosage],
            "dispenseRequest": (
                {"expectedSupplyDuration": {"value": args["duration_days"], "unit": "days"}}
                if args["duration_days"]
                else None
            ),
            "reasonCode": [{"text": args["indication"]}] if args["indication"] else None,
        }
    )


def service_request_create(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    encounter = _scope(args=args, context=context)
    target = args["target_date"]
    if target is not None and target < context.current_date:
        raise ToolError.of("target_date", "today_or_later", target=target, today=context.current_date)
    return drop_none(
        {
            **_common("ServiceRequest", args=args, context=context, encounter=encounter),
            "status": "active",
            "intent": "order",
            "priority": args["priority"],
            "code": {"text": args["service_type"]},
            "occurrenceDateTime": target.isoformat() if target else None,
            "authoredOn": context.current_date.isoformat(),
            "note": [{"text": args["note"]}] if args["note"] else None,
        }
    )


def flag_create(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    encounter = _scope(args=args, context=context)
    return drop_none(
        {
            **_common("Flag", args=args, context=context, encounter=encounter),
            "status": "active",
            "category": [
                {
                    "coding": [
                        {"system": "http://terminology.hl7.org/CodeSystem/flag-category", "code": args["category"]}
                    ]
                }
            ],
            "code": {"text": args["code"]},
            "period": {"start": context.current_date.isoformat()},
            "note": [{"text": args["detail"]}],
        }
    )


def prepare_to_answer(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Marks the end of information gathering; the harness stops the tool loop after it."""
    return {
        "status": "ready",
        "message": "Information gathering is complete. Now write the final answer to the physician.",
    }
