"""Canonical facts of a tool result: what the record says, whoever wrote the FHIR.

Two tool layers over the same MIMIC rows (PhysReview's and the released PhysAssistBench one) spell
the same facts differently: resource ids (``rx-<subject>-<row>`` vs ``rx-<pharmacy_id>``), references
(``Encounter/encounter-22678576.0`` vs ``Encounter/22678576``), where a start time lives
(``timing.repeat.boundsPeriod`` vs ``authoredOn``), and each emits fields the other does not.
So a resource is matched by its *record identity* (the row it comes from, per resource type, as in
``shared/formats/pab-release-semantics.md`` §1) and compared on canonical facts (values, units,
times, statuses, reference ranges, codes). A fact only one side states is representation: listed
apart, never a difference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scenarios.audit.facts import Difference, normalise_number, parse_time

_NOTE_ID = re.compile(r"\d+-[A-Z]{2}-\d+")
_SPACE = re.compile(r"\s+")
# Interpretation codes that mean "outside the normal range" (v3 ObservationInterpretation + the release's A).
_ABNORMAL = frozenset({"A", "AA", "H", "HH", "L", "LL", "HU", "LU", ">", "<", "ABNORMAL"})


def ref_id(value: Any) -> str:
    """``Encounter/encounter-22678576.0`` → ``22678576``; ``Patient/10`` → ``10``."""
    text = value.get("reference", "") if isinstance(value, dict) else str(value or "")
    tail = text.rsplit("/", 1)[-1]
    tail = re.sub(r"^[A-Za-z]+-", "", tail)
    return re.sub(r"^(\d+)\.0+$", r"\1", tail)


def _time(value: Any) -> str | None:
    when = parse_time(value) if isinstance(value, str) else None
    if when is None:
        return None
    return when.strftime("%Y-%m-%d %H:%M:%S") if len(value.strip()) > 10 else when.strftime("%Y-%m-%d")


def _text(value: Any) -> str:
    return _SPACE.sub(" ", str(value)).strip().lower() if value is not None else ""


def _get(node: Any, *path: str | int) -> Any:
    for key in path:
        if isinstance(key, int):
            node = node[key] if isinstance(node, list) and len(node) > key else None
        else:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


def _quantity(node: Any) -> tuple[str, str] | None:
    if not isinstance(node, dict) or node.get("value") is None:
        return None
    return normalise_number(node["value"]), _SPACE.sub(" ", str(node.get("unit") or node.get("code") or "")).strip()


def _codes(concept: Any) -> list[str]:
    return [str(c.get("code")) for c in (_get(concept, "coding") or []) if isinstance(c, dict) and c.get("code")]


def _concept(concept: Any) -> str:
    """A concept's code where it has one, else its text."""
    codes = _codes(concept)
    if codes:
        return codes[0].replace(".", "").upper()
    return _text(_get(concept, "text"))


def _extension(res: dict[str, Any], suffix: str) -> Any:
    for ext in res.get("extension") or []:
        if isinstance(ext, dict) and str(ext.get("url", "")).endswith(suffix):
            return next((v for k, v in ext.items() if k.startswith("value")), None)
    return None


def _put(out: dict[str, str], key: str, value: Any) -> None:
    if value not in (None, ""):
        out[key] = value if isinstance(value, str) else normalise_number(value)


def _put_quantity(out: dict[str, str], key: str, node: Any) -> None:
    q = _quantity(node)
    if q is not None:
        out[key] = q[0]
        if q[1]:
            out[f"{key}.unit"] = q[1]


def _observation(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    facts: dict[str, str] = {}
    code = _concept(res.get("code"))
    when = _time(res.get("effectiveDateTime")) or _time(_get(res, "effectivePeriod", "start"))
    _put(facts, "status", res.get("status"))
    _put_quantity(facts, "value", res.get("valueQuantity"))
    if "valueString" in res:
        _put(facts, "value", _text(res["valueString"]))
    _put_quantity(facts, "range.low", _get(res, "referenceRange", 0, "low"))
    _put_quantity(facts, "range.high", _get(res, "referenceRange", 0, "high"))
    codes = [c.upper() for i in res.get("interpretation") or [] for c in _codes(i)]
    if codes:
        facts["abnormal"] = "yes" if any(c in _ABNORMAL for c in codes) else "no"
    _put(facts, "encounter", ref_id(res.get("encounter")) if res.get("encounter") else None)
    return f"{code}@{when}", facts


def _condition(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    facts: dict[str, str] = {}
    hadm = ref_id(res.get("encounter")) if res.get("encounter") else ""
    _put(facts, "clinical_status", ",".join(_codes(res.get("clinicalStatus"))))
    seq = res.get("_seq_num", _extension(res, "seq_num"))
    _put(facts, "seq_num", seq)
    return f"{_concept(res.get('code'))}@{hadm}", facts


def _medication_request(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    dosage = _get(res, "dosageInstruction", 0) or {}
    bounds = _get(dosage, "timing", "repeat", "boundsPeriod") or {}
    validity = _get(res, "dispenseRequest", "validityPeriod") or {}
    start = _time(bounds.get("start")) or _time(res.get("authoredOn")) or _time(validity.get("start"))
    facts: dict[str, str] = {}
    _put(facts, "status", res.get("status"))
    _put(facts, "end", _time(bounds.get("end")) or _time(validity.get("end")))
    _put_quantity(facts, "dose", _get(dosage, "doseAndRate", 0, "doseQuantity"))
    _put(facts, "route", _text(_get(dosage, "route", "text")))
    _put(facts, "encounter", ref_id(res.get("encounter")) if res.get("encounter") else None)
    drug = _text(_get(res, "medicationCodeableConcept", "text"))
    return f"{drug}@{start}", facts


def _medication_administration(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    facts: dict[str, str] = {}
    _put(facts, "status", res.get("status"))
    event = res.get("_event_txt") or _get(res, "statusReason", 0, "text")
    _put(facts, "event", _text(event))
    _put(facts, "encounter", ref_id(res.get("context")) if res.get("context") else None)
    drug = _text(_get(res, "medicationCodeableConcept", "text"))
    return f"{drug}@{_time(res.get('effectiveDateTime'))}", facts


def _note(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    match = _NOTE_ID.search(str(res.get("id", "")))
    facts: dict[str, str] = {}
    _put(facts, "status", res.get("status"))
    if match:
        return match.group(0), facts
    # microbiology reports: one per specimen and time
    return f"{_text(_get(res, 'code', 'text'))}@{_time(res.get('effectiveDateTime'))}", facts


def _encounter(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    facts: dict[str, str] = {}
    _put(facts, "status", res.get("status"))
    _put(facts, "start", _time(_get(res, "period", "start")))
    _put(facts, "end", _time(_get(res, "period", "end")))
    return ref_id(str(res.get("id", ""))), facts


def _patient(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    facts: dict[str, str] = {}
    _put(facts, "gender", res.get("gender"))
    _put(facts, "deceased", _time(res.get("deceasedDateTime")))
    return "patient", facts


def _procedure(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    hadm = ref_id(res.get("encounter")) if res.get("encounter") else ""
    return f"{_concept(res.get('code'))}@{hadm}", {}


def _care_plans(res: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """One entry per (note, category): the release writes a CarePlan per discharge-note section, we one per note
    with its categories; a category is the same fact however many sections carry it."""
    note = _NOTE_ID.search(str(res.get("id", "")))
    key = note.group(0) if note else str(res.get("id", ""))
    facts: dict[str, str] = {}
    _put(facts, "status", res.get("status"))
    cats = sorted({c for cat in res.get("category") or [] for c in [*_codes(cat), _text(_get(cat, "text"))] if c})
    names = [c for c in cats if c in ("discharge-planning", "followup", "treatment")] or cats or [""]
    return [(f"{key}|{name}", facts) for name in names]


def _allergy(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """What the patient is allergic to (the release numbers its one entry, we key it by the note)."""
    facts: dict[str, str] = {}
    _put(facts, "clinical_status", ",".join(_codes(res.get("clinicalStatus"))))
    return _text(_get(res, "code", "text")), facts


def _other(res: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """CarePlan, AllergyIntolerance, simulated writes: the note behind them, else the id."""
    match = _NOTE_ID.search(str(res.get("id", "")))
    return (match.group(0) if match else str(res.get("id", ""))), {}


_BY_TYPE = {
    "Observation": _observation,
    "Condition": _condition,
    "MedicationRequest": _medication_request,
    "MedicationAdministration": _medication_administration,
    "DiagnosticReport": _note,
    "DocumentReference": _note,
    "Encounter": _encounter,
    "Patient": _patient,
    "Procedure": _procedure,
    "AllergyIntolerance": _allergy,
}
# Types whose resources repeat one fact per part: merged, not numbered
_SETS = {"CarePlan": _care_plans}


@dataclass
class Canonical:
    """Resources by ``Type|identity``: their facts and the id each side gave them; or an error."""

    resources: dict[str, dict[str, str]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def _resources(result: Any) -> list[dict[str, Any]] | None:
    if not isinstance(result, dict):
        return None
    if result.get("resourceType") == "Bundle":
        return [e["resource"] for e in result.get("entry") or [] if isinstance(e, dict) and "resource" in e]
    if result.get("resourceType") == "OperationOutcome":
        # the release's "No <kind> found": the same fact as an empty Bundle
        return []
    if "resourceType" in result:
        return [result]
    return None


def canonical(result: Any) -> Canonical | None:
    """The canonical facts of a FHIR result; ``None`` for something that is not one."""
    if isinstance(result, dict) and "error" in result and "resourceType" not in result:
        return Canonical(error=_text(result.get("error")))
    resources = _resources(result)
    if resources is None:
        return None
    out = Canonical()
    for res in resources:
        kind = res.get("resourceType", "Resource")
        if kind in _SETS:
            for identity, facts in _SETS[kind](res):
                out.resources.setdefault(f"{kind}|{identity}", facts)
                out.ids.setdefault(f"{kind}|{identity}", str(res.get("id", "")))
            continue
        identity, facts = _BY_TYPE.get(kind, _other)(res)
        key = f"{kind}|{identity}"
        n = 1
        while key in out.resources:  # the same row twice (e.g. two vitals at one time): keep both
            n += 1
            key = f"{kind}|{identity}#{n}"
        out.resources[key] = facts
        out.ids[key] = str(res.get("id", ""))
    return out


@dataclass
class Comparison:
    differences: list[Difference]
    representation: list[str]


def compare_canonical(*, stored: Canonical, fresh: Canonical) -> Comparison:
    """Differences on facts; id schemes and one-sided fields go to ``representation``."""
    if stored.error is not None or fresh.error is not None:
        if (stored.error is None) == (fresh.error is None):
            return Comparison([], [])  # both errors: the messages are the tool layer's wording
        diff = Difference(
            "error",
            "",
            stored=f"error: {stored.error}" if stored.error is not None else None,
            now=f"error: {fresh.error}" if fresh.error is not None else None,
        )
        return Comparison([diff], [])
    out: list[Difference] = []
    notes: set[str] = set()
    both = stored.resources.keys() & fresh.resources.keys()
    for key in sorted(stored.resources.keys() - both):
        out.append(Difference("missing", f"{key.split('|')[0]}/{stored.ids[key]}"))
    for key in sorted(fresh.resources.keys() - both):
        out.append(Difference("extra", f"{key.split('|')[0]}/{fresh.ids[key]}"))
    for key in sorted(both):
        a, b = stored.resources[key], fresh.resources[key]
        label = f"{key.split('|')[0]}/{stored.ids[key]}"
        if stored.ids[key] != fresh.ids[key]:
            notes.add("id scheme")
        for fact in sorted(a.keys() & b.keys()):
            same = a[fact].casefold() == b[fact].casefold() if fact.endswith(".unit") else a[fact] == b[fact]
            if not same:
                # a value is shown with its unit, as a reviewer reads it ("0.8 mg/dL → 0.9 mg/dL")
                unit_a, unit_b = a.get(f"{fact}.unit", ""), b.get(f"{fact}.unit", "")
                out.append(
                    Difference("changed", label, fact, f"{a[fact]} {unit_a}".strip(), f"{b[fact]} {unit_b}".strip())
                )
        notes.update(f"{fact} only stored" for fact in a.keys() - b.keys())
        notes.update(f"{fact} only re-executed" for fact in b.keys() - a.keys())
    return Comparison(out, sorted(notes))
