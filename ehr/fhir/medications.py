"""MedicationRequest.search (prescriptions) and MedicationAdministration.search (emar)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from ehr import models as m
from ehr.fhir.common import bundle, check_scope, concept, drop_none, quantity, ref
from ehr.fhir.context import ToolContext, fmt_datetime

# The released contract has no _count for medications; newest first, this many.
MEDICATION_COUNT = 50

# emar event_txt → MedicationAdministration.status
_EMAR_STATUS = {
    "administered": "completed",
    "applied": "completed",
    "flushed": "completed",
    "confirmed": "completed",
    "rate change": "completed",
    "started": "in-progress",
    "restarted": "in-progress",
    "stopped": "stopped",
    "not given": "not-done",
    "held": "not-done",
    "hold dose": "not-done",
    "not applied": "not-done",
    "not flushed": "not-done",
    "not started": "not-done",
}


def emar_status(event: str) -> str:
    """Exact MIMIC event text first, then its wording ("Delayed Administered", "Not Given per Sliding Scale")."""
    text = event.strip().lower()
    if text in _EMAR_STATUS:
        return _EMAR_STATUS[text]
    if text.startswith("not ") or "held" in text or "hold" in text:
        return "not-done"
    if "stopped" in text:
        return "stopped"
    if any(word in text for word in ("administered", "applied", "given", "confirmed", "flushed")):
        return "completed"
    if "started" in text:
        return "in-progress"
    return "unknown"


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def rx_status(rx: m.Prescription, *, context: ToolContext) -> str:
    """Active while the order runs into the current date; no stop time → unknown.

    Under ``release`` bounds the released rule (semantics file §1): ``completed`` when the row has a
    start and a stop time, ``active`` with a start only, else ``unknown``; the current date plays no part.
    """
    if context.bounds == "release":
        if rx.starttime is not None:
            return "completed" if rx.stoptime is not None else "active"
        return "unknown"
    if rx.stoptime is None:
        return "unknown"
    return "completed" if context.has_passed(rx.stoptime) else "active"


def _dose_text(rx: m.Prescription) -> str:
    parts = [f"{rx.dose_val_rx} {rx.dose_unit_rx or ''}".strip() if rx.dose_val_rx else "", rx.route or ""]
    if rx.doses_per_24_hrs:
        n = rx.doses_per_24_hrs
        parts.append(f"{n:g} {'time' if n == 1 else 'times'} per day")
    return " ".join(p for p in parts if p)


def _request_resource(rx: m.Prescription, *, context: ToolContext) -> dict[str, Any]:
    status = rx_status(rx, context=context)
    coding = []
    if rx.ndc and rx.ndc.strip("0"):
        coding.append({"system": "http://hl7.org/fhir/sid/ndc", "code": rx.ndc, "display": rx.drug})
    if rx.formulary_drug_cd:
        coding.append({"system": "mimic-iv/formulary_drug_cd", "code": rx.formulary_drug_cd, "display": rx.drug})
    medication: dict[str, Any] = {"text": rx.drug}
    if coding:
        medication["coding"] = coding
    dose_value = _number(rx.dose_val_rx)
    dosage = drop_none(
        {
            "text": _dose_text(rx) or None,
            "route": concept(rx.route) if rx.route else None,
            "timing": (
                {"repeat": {"frequency": rx.doses_per_24_hrs, "period": 1, "periodUnit": "d"}}
                if rx.doses_per_24_hrs
                else None
            ),
            "doseAndRate": (
                [{"doseQuantity": quantity(dose_value, rx.dose_unit_rx)}]
                if dose_value is not None
                else (
                    [{"doseRange": {"text": f"{rx.dose_val_rx} {rx.dose_unit_rx or ''}".strip()}}]
                    if rx.dose_val_rx
                    else None
                )
            ),
        }
    )
    period = drop_none(
        {
            "start": fmt_datetime(rx.starttime),
            # a stop time after the cutoff is the future: not shown, the order reads as active
            "end": fmt_datetime(rx.stoptime) if status == "completed" else None,
        }
    )
    return drop_none(
        {
            "resourceType": "MedicationRequest",
            "id": f"rx-{rx.pharmacy_id}",
            "status": status,
            "intent": "order",
            "category": [concept(rx.drug_type)] if rx.drug_type else None,
            "medicationCodeableConcept": medication,
            "subject": ref("Patient", rx.subject_id),
            "encounter": ref("Encounter", rx.hadm_id),
            "authoredOn": fmt_datetime(rx.starttime),
            "dosageInstruction": [dosage] if dosage else None,
            "dispenseRequest": {"validityPeriod": period},
            "extension": [{"url": "mimic-iv/prod_strength", "valueString": rx.prod_strength}]
            if rx.prod_strength
            else None,
        }
    )


def _text_filter(field: str, code: str) -> Q:
    """Drug names match on any word given ("heparin", "Heparin Sodium", "vanco")."""
    return Q(**{f"{field}__icontains": code.strip()})


def _release_status_filter(qs, status: str):
    """The released filter keeps rows whose derived status equals the argument (never ``stopped``)."""
    if status == "completed":
        return qs.filter(starttime__isnull=False, stoptime__isnull=False)
    if status == "active":
        return qs.filter(starttime__isnull=False, stoptime__isnull=True)
    return qs.none()


def medication_request_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """``completed`` and ``stopped`` both mean "ended before the current date": MIMIC does not tell them apart."""
    check_scope(args=args, context=context)
    qs = m.Prescription.objects.filter(subject_id=args["subject_id"], starttime__lt=context.cutoff)
    if args["hadm_id"] is not None:
        qs = qs.filter(hadm_id=args["hadm_id"])
    if args["medication"] is not None:
        qs = qs.filter(_text_filter("drug", args["medication"]))
    if context.bounds == "release" and args["status"] is not None:
        qs = _release_status_filter(qs, args["status"])
    elif args["status"] == "active":
        qs = qs.filter(stoptime__gte=context.now)
    elif args["status"] in ("completed", "stopped"):
        qs = qs.filter(stoptime__lt=context.now)
    total = qs.count()
    rows = list(qs.order_by("-starttime", "-pharmacy_id")[:MEDICATION_COUNT])
    return bundle([_request_resource(rx, context=context) for rx in rows], total=total)


def medication_administration_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_scope(args=args, context=context)
    qs = m.Emar.objects.filter(subject_id=args["subject_id"], charttime__lt=context.cutoff)
    if args["hadm_id"] is not None:
        qs = qs.filter(hadm_id=args["hadm_id"])
    if args["medication"] is not None:
        qs = qs.filter(_text_filter("medication", args["medication"]))
    total = qs.count()
    out = []
    for row in qs.order_by("-charttime", "-emar_seq")[:MEDICATION_COUNT]:
        event = (row.event_txt or "").strip()
        res = drop_none(
            {
                "resourceType": "MedicationAdministration",
                "id": f"emar-{row.emar_id}",
                # the release says completed for every emar row (its event in _event_txt); statusReason keeps it here
                "status": "completed" if context.bounds == "release" else emar_status(event),
                "statusReason": [{"text": event}] if event else None,
                "medicationCodeableConcept": {"text": row.medication or "(not recorded)"},
                "subject": ref("Patient", row.subject_id),
                "context": ref("Encounter", row.hadm_id) if row.hadm_id is not None else None,
                "effectiveDateTime": fmt_datetime(row.charttime),
                "request": ref("MedicationRequest", f"rx-{row.pharmacy_id}") if row.pharmacy_id is not None else None,
                "extension": (
                    [{"url": "mimic-iv/scheduletime", "valueDateTime": fmt_datetime(row.scheduletime)}]
                    if row.scheduletime
                    else None
                ),
            }
        )
        out.append(res)
    return bundle(out, total=total)
