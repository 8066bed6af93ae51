"""Simulated write tools and ``prepare_to_answer``.

Writes are checked like a real order entry would (patient, encounter, required fields) and answer
with the resource that *would* be created, marked ``"_simulated": true``. They never touch the
database: the record is the benchmark's ground truth and must stay as imported.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ehr import models as m
from ehr.fhir.common import concept, drop_none, ref, require_encounter, require_patient
from ehr.fhir.context import ToolContext
from ehr.fhir.errors import ToolError

_NEW_ORDER_STATUSES = ("active", "draft")


def _sim_id(kind: str, args: dict[str, Any], context: ToolContext) -> str:
    """Deterministic id: the same call in the same session gets the same id (stable replays)."""
    payload = json.dumps(
        {"a": args, "d": context.current_date.isoformat(), "s": context.session_id}, sort_keys=True, default=str
    )
    return f"sim-{kind.lower()}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def _scope(*, args: dict[str, Any], context: ToolContext) -> int | None:
    require_patient(subject_id=args["patient"])
    encounter = args.get("encounter")
    if encounter is None and context.hadm_id is not None and context.subject_id == args["patient"]:
        encounter = context.hadm_id
    if encounter is not None:
        require_encounter(subject_id=args["patient"], hadm_id=encounter, context=context)
    return encounter


def _common(kind: str, *, args: dict[str, Any], context: ToolContext, encounter: int | None) -> dict[str, Any]:
    return {
        "resourceType": kind,
        "id": _sim_id(kind, args, context),
        "_simulated": True,
        "subject": ref("Patient", args["patient"]),
        "encounter": ref("Encounter", encounter) if encounter is not None else None,
    }


def medication_request_create(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    encounter = _scope(args=args, context=context)
    status = args["status"]
    if status in _NEW_ORDER_STATUSES:
        missing = [name for name in ("dose", "route", "frequency") if args[name] is None]
        if missing:
            raise ToolError(
                f"MedicationRequest.create with status {status!r} needs {', '.join(missing)}",
                "A new or changed order needs dose (e.g. '5 mg'), route (e.g. 'PO') and frequency (e.g. 'once daily'); "
                "to stop or hold a drug use status 'stopped' or 'on-hold'.",
            )
    replaces = args["replaces"]
    if replaces is not None:
        pharmacy_id = replaces.removeprefix("MedicationRequest/").removeprefix("rx-")
        exists = (
            pharmacy_id.isdigit()
            and m.Prescription.objects.filter(
                subject_id=args["patient"], pharmacy_id=int(pharmacy_id), starttime__lt=context.cutoff
            ).exists()
        )
        if not exists:
            raise ToolError(
                f"replaces={replaces!r} is not one of this patient's medication orders",
                "Pass the id of a MedicationRequest returned by MedicationRequest.search "
                "(e.g. 'rx-12345678'), or omit it.",
            )
    dosage = drop_none(
        {
            "text": " ".join(str(args[k]) for k in ("dose", "route", "frequency") if args[k] is not None) or None,
            "route": concept(args["route"]) if args["route"] else None,
            "timing": {"code": {"text": args["frequency"]}} if args["frequency"] else None,
            "doseAndRate": [{"doseQuantity": {"unit": args["dose"]}}] if args["dose"] else None,
        }
    )
    return drop_none(
        {
            **_common("MedicationRequest", args=args, context=context, encounter=encounter),
            "status": status,
            "intent": args["intent"],
            "medicationCodeableConcept": {"text": args["medication"]},
            "authoredOn": context.current_date.isoformat(),
            "dosageInstruction": [dosage] if dosage else None,
            "dispenseRequest": (
                {"expectedSupplyDuration": {"value": args["duration_days"], "unit": "days"}}
                if args["duration_days"]
                else None
            ),
            "reasonCode": [{"text": args["reason"]}] if args["reason"] else None,
            "note": [{"text": args["note"]}] if args["note"] else None,
            "replaces": [ref("MedicationRequest", f"rx-{pharmacy_id}")] if replaces is not None else None,
        }
    )


def service_request_create(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    encounter = _scope(args=args, context=context)
    occurrence = args["occurrence_date"]
    if occurrence is not None and occurrence < context.current_date:
        raise ToolError(
            f"occurrence_date {occurrence} is before the current date {context.current_date}",
            "Requests are for today or later; omit occurrence_date for 'as soon as routine'.",
        )
    return drop_none(
        {
            **_common("ServiceRequest", args=args, context=context, encounter=encounter),
            "status": "active",
            "intent": "order",
            "category": [{"text": args["category"]}] if args["category"] else None,
            "priority": args["priority"],
            "code": {"text": args["code"]},
            "occurrenceDateTime": occurrence.isoformat() if occurrence else None,
            "authoredOn": context.current_date.isoformat(),
            "reasonCode": [{"text": args["reason"]}] if args["reason"] else None,
            "note": [{"text": args["note"]}] if args["note"] else None,
        }
    )


def flag_create(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    encounter = _scope(args=args, context=context)
    end = args["period_end"]
    if end is not None and end < context.current_date:
        raise ToolError(
            f"period_end {end} is before the current date {context.current_date}", "Omit it or pass a later date."
        )
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
            "period": drop_none({"start": context.current_date.isoformat(), "end": end.isoformat() if end else None}),
            "extension": [{"url": "flag-priority", "valueString": args["priority"]}] if args["priority"] else None,
            "note": [{"text": args["note"]}] if args["note"] else None,
        }
    )


def prepare_to_answer(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Marks the end of information gathering; the harness stops the tool loop after it."""
    return {
        "status": "ready",
        "message": "Information gathering is complete. Now write the final answer to the physician.",
    }
