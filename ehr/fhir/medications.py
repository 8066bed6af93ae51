"""MedicationRequest.search (prescriptions) and MedicationAdministration.search (emar)."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from ehr import models as m
from ehr.fhir.common import bundle, concept, drop_none, quantity, ref, scoped_rows
from ehr.fhir.context import ToolContext, fmt_datetime
from ehr.fhir.sql import db_datetime, icontains, parse_db_datetime

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


class Rx(NamedTuple):
    """The prescription columns the tool renders, as its query reads them."""

    pharmacy_id: int
    subject_id: int
    hadm_id: int
    starttime: dt.datetime | None
    stoptime: dt.datetime | None
    drug_type: str
    drug: str
    formulary_drug_cd: str | None
    ndc: str | None
    prod_strength: str | None
    dose_val_rx: str | None
    dose_unit_rx: str | None
    doses_per_24_hrs: float | None
    route: str | None


# Newest first; the total from the same statement (window count), the scope probe around it (common.scoped_rows).
_RX = """
SELECT {columns}, COUNT(*) OVER (), ROW_NUMBER() OVER (ORDER BY r.starttime DESC, r.pharmacy_id DESC) AS rn
FROM {table} r WHERE r.subject_id = %s AND r.starttime < %s"""
_EMAR = """
SELECT e.emar_id, e.subject_id, e.hadm_id, e.pharmacy_id, e.charttime, e.scheduletime, e.medication, e.event_txt,
       COUNT(*) OVER (), ROW_NUMBER() OVER (ORDER BY e.charttime DESC, e.emar_seq DESC) AS rn
FROM {table} e WHERE e.subject_id = %s AND e.charttime < %s"""


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


def rx_status(rx: m.Prescription | Rx, *, context: ToolContext) -> str:
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


def _dose_text(rx: m.Prescription | Rx) -> str:
    parts = [f"{rx.dose_val_rx} {rx.dose_unit_rx or ''}".strip() if rx.dose_val_rx else "", rx.route or ""]
    if rx.doses_per_24_hrs:
        n = rx.doses_per_24_hrs
        parts.append(f"{n:g} {'time' if n == 1 else 'times'} per day")
    return " ".join(p for p in parts if p)


def _request_resource(rx: m.Prescription | Rx, *, context: ToolContext) -> dict[str, Any]:
    # Built key by key, absent elements left out as drop_none would (same keys, same order): the tool renders up to
    # 50 of these per call, and this is most of its time beside the query (issue 37).
    status = rx_status(rx, context=context)
    drug = rx.drug
    coding = []
    if rx.ndc and rx.ndc.strip("0"):
        coding.append({"system": "http://hl7.org/fhir/sid/ndc", "code": rx.ndc, "display": drug})
    if rx.formulary_drug_cd:
        coding.append({"system": "mimic-iv/formulary_drug_cd", "code": rx.formulary_drug_cd, "display": drug})
    medication: dict[str, Any] = {"text": drug}
    if coding:
        medication["coding"] = coding
    dosage: dict[str, Any] = {}
    text = _dose_text(rx)
    if text:
        dosage["text"] = text
    if rx.route:
        dosage["route"] = concept(rx.route)
    per_day = rx.doses_per_24_hrs
    if per_day:
        dosage["timing"] = {"repeat": {"frequency": per_day, "period": 1, "periodUnit": "d"}}
    dose_value = _number(rx.dose_val_rx)
    if dose_value is not None:
        dosage["doseAndRate"] = [{"doseQuantity": quantity(dose_value, rx.dose_unit_rx)}]
    elif rx.dose_val_rx:
        dosage["doseAndRate"] = [{"doseRange": {"text": f"{rx.dose_val_rx} {rx.dose_unit_rx or ''}".strip()}}]
    start = fmt_datetime(rx.starttime)
    period: dict[str, Any] = {}
    if start is not None:
        period["start"] = start
    # a stop time after the cutoff is the future: not shown, the order reads as active
    if status == "completed" and rx.stoptime is not None:
        period["end"] = fmt_datetime(rx.stoptime)
    out: dict[str, Any] = {
        "resourceType": "MedicationRequest",
        "id": f"rx-{rx.pharmacy_id}",
        "status": status,
        "intent": "order",
    }
    if rx.drug_type:
        out["category"] = [concept(rx.drug_type)]
    out["medicationCodeableConcept"] = medication
    out["subject"] = ref("Patient", rx.subject_id)
    out["encounter"] = ref("Encounter", rx.hadm_id)
    if start is not None:
        out["authoredOn"] = start
    if dosage:
        out["dosageInstruction"] = [dosage]
    out["dispenseRequest"] = {"validityPeriod": period}
    if rx.prod_strength:
        out["extension"] = [{"url": "mimic-iv/prod_strength", "valueString": rx.prod_strength}]
    return out


def _search(
    *, base: str, params: list[Any], alias: str, text_column: str, args: dict[str, Any]
) -> tuple[str, list[Any]]:
    """The admission and drug-name filters both searches share; drug names match on any part ("vanco")."""
    sql = base
    if args["hadm_id"] is not None:
        sql += f" AND {alias}.hadm_id = %s"
        params.append(args["hadm_id"])
    if args["medication"] is not None:
        words, param = icontains(args["medication"].strip())
        sql += " AND " + words.format(column=f"{alias}.{text_column}")
        params.append(param)
    return sql, params


# The released status filter keeps rows whose derived status equals the argument (never ``stopped``).
_RELEASE_STATUS = {
    "completed": " AND r.starttime IS NOT NULL AND r.stoptime IS NOT NULL",
    "active": " AND r.starttime IS NOT NULL AND r.stoptime IS NULL",
    "stopped": " AND 1 = 0",
}


def medication_request_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """``completed`` and ``stopped`` both mean "ended before the current date": MIMIC does not tell them apart."""
    base = _RX.format(columns=", ".join(f"r.{f}" for f in Rx._fields), table=m.Prescription._meta.db_table)
    sql, params = _search(
        base=base,
        params=[args["subject_id"], db_datetime(context.cutoff)],
        alias="r",
        text_column="drug",
        args=args,
    )
    if context.bounds == "release" and args["status"] is not None:
        sql += _RELEASE_STATUS[args["status"]]
    elif args["status"] == "active":
        sql += " AND r.stoptime >= %s"
        params.append(db_datetime(context.now))
    elif args["status"] in ("completed", "stopped"):
        sql += " AND r.stoptime < %s"
        params.append(db_datetime(context.now))
    rows = scoped_rows(query=f"{sql} ORDER BY rn LIMIT {MEDICATION_COUNT}", params=params, args=args, context=context)
    resources = []
    for row in rows:
        rx = Rx(*row[:3], parse_db_datetime(row[3]), parse_db_datetime(row[4]), *row[5 : len(Rx._fields)])
        resources.append(_request_resource(rx, context=context))
    return bundle(resources, total=rows[0][-1] if rows else 0)


def medication_administration_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    sql, params = _search(
        base=_EMAR.format(table=m.Emar._meta.db_table),
        params=[args["subject_id"], db_datetime(context.cutoff)],
        alias="e",
        text_column="medication",
        args=args,
    )
    rows = scoped_rows(query=f"{sql} ORDER BY rn LIMIT {MEDICATION_COUNT}", params=params, args=args, context=context)
    out = []
    for emar_id, subject_id, hadm_id, pharmacy_id, charttime, scheduletime, medication, event_txt, _total in rows:
        event = (event_txt or "").strip()
        res = drop_none(
            {
                "resourceType": "MedicationAdministration",
                "id": f"emar-{emar_id}",
                # the release says completed for every emar row (its event in _event_txt); statusReason keeps it here
                "status": "completed" if context.bounds == "release" else emar_status(event),
                "statusReason": [{"text": event}] if event else None,
                "medicationCodeableConcept": {"text": medication or "(not recorded)"},
                "subject": ref("Patient", subject_id),
                "context": ref("Encounter", hadm_id) if hadm_id is not None else None,
                "effectiveDateTime": fmt_datetime(parse_db_datetime(charttime)),
                "request": ref("MedicationRequest", f"rx-{pharmacy_id}") if pharmacy_id is not None else None,
                "extension": (
                    [{"url": "mimic-iv/scheduletime", "valueDateTime": fmt_datetime(parse_db_datetime(scheduletime))}]
                    if scheduletime
                    else None
                ),
            }
        )
        out.append(res)
    return bundle(out, total=rows[0][-1] if rows else 0)
