"""What the laboratory and the vital-sign searches of Observation.search share: the category codings, a value as
FHIR writes it, one item's Observation resource, the unknown-code refusal, and newest-first merging."""

from __future__ import annotations

import heapq
from typing import Any

from ehr.fhir import codes
from ehr.fhir.common import (
    ITEMID_SYSTEM,
    OBS_CATEGORY_SYSTEM,
    quantity,
    ref,
)
from ehr.fhir.context import fmt_datetime
from ehr.fhir.errors import ToolError

# Microbiology has its own (ehr.fhir.microbiology).
CATEGORIES = {
    cat: [{"coding": [{"system": OBS_CATEGORY_SYSTEM, "code": cat, "display": disp}]}]
    for cat, disp in {"laboratory": "Laboratory", "vital-signs": "Vital Signs"}.items()
}


def set_value(out: dict[str, Any], *, valuenum: float | None, value: str | None, unit: str | None) -> None:
    if valuenum is not None:
        out["valueQuantity"] = quantity(valuenum, unit)
    elif value not in (None, ""):
        out["valueString"] = value  # "<0.1", "NEG", "___": reported as written


def item_observation(
    *,
    rid: str,
    category: str,
    item: tuple[int, str | None],
    subject_id: int,
    hadm_id: int | None,
    charttime: Any,
    reading: tuple[float | None, str | None, str | None],
) -> dict[str, Any]:
    """The part a lab and a vital-sign Observation share: identity, code, subject, time, value."""
    itemid, label = item
    label = label or str(itemid)
    out: dict[str, Any] = {
        "resourceType": "Observation",
        "id": rid,
        "status": "final",
        "category": CATEGORIES[category],
        "code": {"coding": [{"system": ITEMID_SYSTEM, "code": str(itemid), "display": label}], "text": label},
        "subject": ref("Patient", subject_id),
    }
    if hadm_id is not None:
        out["encounter"] = ref("Encounter", hadm_id)
    out["effectiveDateTime"] = fmt_datetime(charttime)
    valuenum, value, unit = reading
    set_value(out, valuenum=valuenum, value=value, unit=unit)
    return out


def unknown_code(*, code: str, category: str) -> ToolError:
    close = codes.suggestions(code)
    hint = "test_name_close" if close else "test_name"
    return ToolError.of("unknown_code", hint, category=category, code=repr(code), names=", ".join(close))


def newest(resources: list[dict[str, Any]], *, count: int) -> list[dict[str, Any]]:
    # Full datetimes and OMR dates compare correctly as strings (both start YYYY-MM-DD).
    return heapq.nlargest(count, resources, key=lambda r: r.get("effectiveDateTime") or "")
