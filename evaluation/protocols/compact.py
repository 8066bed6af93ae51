"""Compact text observations, as the released PhysAssistBench runner gives tool results to the model.

Format (``shared/formats/pab-protocol.md``, "The released runner's conditions"): a searchset Bundle
becomes ``(N results)`` and one line per resource, at most :data:`MAX_ENTRIES`, then
``... (K more)``; report text is cut to 600 characters, note text to 800; a patient answer is its
``patient_response`` text (at most 1,500 characters); a created resource is
``<Type> created: id=<id> status=<status>``; anything else is its JSON. The whole text is capped at
:data:`MAX_CHARS` as the release does. Pure functions: the token bench imports them too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 15
REPORT_CHARS = 600
NOTE_CHARS = 800
PATIENT_CHARS = 1500
MAX_CHARS = 4000
UNKNOWN_CHARS = 200
WRITE_TYPES = frozenset({"MedicationRequest", "ServiceRequest", "Flag"})


def _text(concept: Any) -> str:
    return str(concept.get("text") or "") if isinstance(concept, dict) else ""


def _first(items: Any) -> dict[str, Any]:
    return items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}


def _day(value: Any, n: int = 10) -> str:
    return str(value or "")[:n]


def _observation(r: dict[str, Any]) -> str:
    code = _text(r.get("code"))
    quantity = r.get("valueQuantity") or {}
    date = _day(r.get("effectiveDateTime") or r.get("issued"))
    coding = _first(_first(r.get("interpretation")).get("coding"))
    interp = f" ({coding.get('display') or coding.get('code') or ''})" if coding else ""
    value_text = r.get("valueString") or _text(r.get("valueCodeableConcept"))
    if quantity.get("value", "") != "":
        return f"  - {code}: {quantity['value']} {quantity.get('unit', '')}{interp} @ {date}"
    if value_text:
        return f"  - {code}: {value_text}{interp} @ {date}"
    return f"  - {code} @ {date}"


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _medication_request(r: dict[str, Any]) -> str:
    """The release's tool layer writes the dosage text "<dose><unit> <route>" ("5mg PO/NG") and no authoredOn,
    so its runner shows "Apixaban [completed]: 5mg PO/NG @ " (semantics file, corrections)."""
    dosage = _first(r.get("dosageInstruction"))
    quantity = _first(dosage.get("doseAndRate")).get("doseQuantity") or {}
    route = _text(dosage.get("route"))
    if quantity.get("value") is not None:
        dose = f"{_number(quantity['value'])}{quantity.get('unit') or ''} {route}".strip()
    else:
        dose = route
    drug = _text(r.get("medicationCodeableConcept"))
    return f"  - {drug} [{r.get('status', '')}]: {dose} @ "


def _medication_administration(r: dict[str, Any]) -> str:
    dosage = r.get("dosage") or {}
    amount = dosage.get("dose") or {}
    dose = dosage.get("text") or f"{amount.get('value', '')} {amount.get('unit', '')}"
    drug = _text(r.get("medicationCodeableConcept"))
    return f"  - {drug}: {dose} @ {_day(r.get('effectiveDateTime'), 16)}"


def _condition(r: dict[str, Any]) -> str:
    status = r.get("clinicalStatus") or {}
    clinical = status.get("text") or _first(status.get("coding")).get("code", "")
    # the release's Conditions carry no date
    return f"  - {_text(r.get('code'))} [{clinical}] @ "


def _diagnostic_report(r: dict[str, Any]) -> str:
    form = next((p["data"] for p in r.get("presentedForm") or [] if isinstance(p.get("data"), str)), "")
    conclusion = r.get("conclusion") or form
    head = f"  - {_text(r.get('code'))} @ {_day(r.get('effectiveDateTime'))}"
    return f"{head}: {conclusion[:REPORT_CHARS]}" if conclusion else head


def _encounter(r: dict[str, Any]) -> str:
    kind = (r.get("class") or {}).get("code", "")
    etype = _text(_first(r.get("type")))
    period = r.get("period") or {}
    disposition = (r.get("hospitalization") or {}).get("dischargeDisposition") or {}
    coding = _first(disposition.get("coding"))
    where = coding.get("display") or coding.get("code") or disposition.get("text") or ""
    return f"  - {kind} {etype} {_day(period.get('start'))}–{_day(period.get('end'))} {where}"


def _allergy(r: dict[str, Any]) -> str:
    reactions = [_text(m) for rx in r.get("reaction") or [] for m in rx.get("manifestation") or []]
    return f"  - {_text(r.get('code'))} [{r.get('criticality', '')}]: {', '.join(reactions)}"


def _procedure(r: dict[str, Any]) -> str:
    return f"  - {_text(r.get('code'))} [{r.get('status', '')}] @ {_day(r.get('performedDateTime'))}"


def _care_plan(r: dict[str, Any]) -> str:
    """The release gives one CarePlan per discharge-note section, shown as "<section> [completed]"."""
    sections = [_text(c) for c in r.get("category") or [] if _text(c)] or [str(r.get("title") or "")]
    return "\n".join(f"  - {section} [completed]" for section in sections)


def _document(r: dict[str, Any]) -> str:
    text = next(
        (c["attachment"]["data"] for c in r.get("content") or [] if (c.get("attachment") or {}).get("data")), ""
    )
    if not text:  # PhysReview's notes carry their text in sections, not in an attachment
        text = "\n".join(f"{s.get('title', '')}: {s.get('text', '')}" for s in r.get("section") or [])
    head = f"  - {_text(r.get('type'))} @ {_day(r.get('date'))}"
    return f"{head}: {text[:NOTE_CHARS]}" if text else head


_LINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "Observation": _observation,
    "MedicationRequest": _medication_request,
    "MedicationAdministration": _medication_administration,
    "Condition": _condition,
    "DiagnosticReport": _diagnostic_report,
    "Encounter": _encounter,
    "AllergyIntolerance": _allergy,
    "Procedure": _procedure,
    "CarePlan": _care_plan,
    "DocumentReference": _document,
}


def compact_bundle(bundle: dict[str, Any], *, max_entries: int = MAX_ENTRIES) -> str:
    entries = bundle.get("entry") or []
    total = bundle.get("total", len(entries))
    if not entries:
        return "(0 results)"
    lines = [f"({total} results)"]
    for entry in entries[:max_entries]:
        resource = (entry.get("resource") if isinstance(entry, dict) else None) or {}
        kind = str(resource.get("resourceType", ""))
        line = _LINES.get(kind)
        if line is None:
            lines.append(f"  - {kind}: {json.dumps(resource, default=str)[:UNKNOWN_CHARS]}")
        else:
            lines.append(line(resource))
    if isinstance(total, int) and total > max_entries:
        lines.append(f"  ... ({total - max_entries} more)")
    return "\n".join(lines)


def _render(observation: Any) -> str:
    if isinstance(observation, dict):
        if observation.get("resourceType") == "Bundle":
            return compact_bundle(observation)
        if "patient_response" in observation:
            return str(observation.get("patient_response", ""))[:PATIENT_CHARS]
        if observation.get("resourceType") in WRITE_TYPES:
            kind = observation["resourceType"]
            return f"{kind} created: id={observation.get('id', '')} status={observation.get('status', '')}"
    return json.dumps(observation, ensure_ascii=False, default=str)


def compact_observation(*, tool: str, observation: Any) -> str:
    """The text the release gives the model for one tool result (``tool`` is the canonical tool name;
    the format depends on the result's shape only, the name is kept for callers and future rules)."""
    del tool
    text = _render(observation)
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + f"\n... [truncated: {len(text)} chars total]"
    return text
