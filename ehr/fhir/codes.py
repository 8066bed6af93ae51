"""Resolve what an assistant types as a code ("creatinine", "K", "50912", "mimic-iv/itemid|50912")
into MIMIC itemids.

Order: numeric itemid → exact label (case-insensitive) → alias → whole-word/partial label match.
The first step that finds something wins, so "Creatinine" never drags in "Creatinine, Urine"
when the exact label exists, while "troponin" still finds "Troponin T".

Resolved codes are memoised in-process (an assistant types the same few codes again and again, and
each resolution costs up to four ORM queries, ~2 ms of CPU on the tool hot path), together with the
distinct omr result names. The memo is dropped by :func:`clear_cache` (the importer calls it after
loading a table, tests before each test) and otherwise after ``CACHE_TTL_SECONDS`` (60 s), so another
process's import is seen within a minute.
"""

from __future__ import annotations

import difflib
import re
import threading
import time
from dataclasses import dataclass, field

from django.db.models import Exists, Q, QuerySet

from ehr import models as m

# Lower-case alias → canonical MIMIC labels (d_labitems / d_items). Only abbreviations and synonyms
# clinicians use; anything spelled like the MIMIC label is found by the exact/partial steps.
LAB_ALIASES: dict[str, tuple[str, ...]] = {
    "cr": ("Creatinine",),
    "creat": ("Creatinine",),
    "serum creatinine": ("Creatinine",),
    "scr": ("Creatinine",),
    "k": ("Potassium",),
    "k+": ("Potassium",),
    "serum potassium": ("Potassium",),
    "na": ("Sodium",),
    "cl": ("Chloride",),
    "hco3": ("Bicarbonate",),
    "bicarb": ("Bicarbonate",),
    "co2": ("Bicarbonate",),
    "bun": ("Urea Nitrogen",),
    "urea": ("Urea Nitrogen",),
    "blood urea nitrogen": ("Urea Nitrogen",),
    "mg": ("Magnesium",),
    "ca": ("Calcium, Total",),
    "calcium": ("Calcium, Total",),
    "phos": ("Phosphate",),
    "phosphorus": ("Phosphate",),
    "hgb": ("Hemoglobin",),
    "hb": ("Hemoglobin",),
    "haemoglobin": ("Hemoglobin",),
    "hct": ("Hematocrit",),
    "wbc": ("White Blood Cells", "WBC Count"),
    "white blood cell count": ("White Blood Cells", "WBC Count"),
    "white count": ("White Blood Cells", "WBC Count"),
    "plt": ("Platelet Count",),
    "platelets": ("Platelet Count",),
    "platelet": ("Platelet Count",),
    "inr": ("INR(PT)",),
    "pt/inr": ("INR(PT)", "PT"),
    "prothrombin time": ("PT",),
    "aptt": ("PTT",),
    "ptt": ("PTT",),
    "glucose": ("Glucose",),
    "blood glucose": ("Glucose",),
    "blood sugar": ("Glucose",),
    "bg": ("Glucose",),
    "a1c": ("% Hemoglobin A1c",),
    "hba1c": ("% Hemoglobin A1c",),
    "hemoglobin a1c": ("% Hemoglobin A1c",),
    "alt": ("Alanine Aminotransferase (ALT)",),
    "sgpt": ("Alanine Aminotransferase (ALT)",),
    "ast": ("Asparate Aminotransferase (AST)", "Aspartate Aminotransferase (AST)"),
    "sgot": ("Asparate Aminotransferase (AST)", "Aspartate Aminotransferase (AST)"),
    "alp": ("Alkaline Phosphatase",),
    "alk phos": ("Alkaline Phosphatase",),
    "bilirubin": ("Bilirubin, Total",),
    "tbili": ("Bilirubin, Total",),
    "total bilirubin": ("Bilirubin, Total",),
    "troponin": ("Troponin T", "Troponin I"),
    "trop": ("Troponin T", "Troponin I"),
    "bnp": ("NTproBNP", "BNP"),
    "nt-probnp": ("NTproBNP",),
    "lactic acid": ("Lactate",),
    "crp": ("C-Reactive Protein",),
    "esr": ("Sedimentation Rate",),
    "tsh": ("Thyroid Stimulating Hormone",),
    "egfr": ("Estimated GFR (MDRD equation)", "eGFR"),
    "gfr": ("Estimated GFR (MDRD equation)", "eGFR"),
    "vanc": ("Vancomycin",),
    "vanco": ("Vancomycin",),
    "vancomycin level": ("Vancomycin",),
    "vancomycin trough": ("Vancomycin",),
    "digoxin level": ("Digoxin",),
    "lipase level": ("Lipase",),
    "procalcitonin": ("Procalcitonin",),
    "abg ph": ("pH",),
    "pco2": ("pCO2",),
    "po2": ("pO2",),
}

VITAL_ALIASES: dict[str, tuple[str, ...]] = {
    "hr": ("Heart Rate",),
    "pulse": ("Heart Rate",),
    "heart rate": ("Heart Rate",),
    "bp": (
        "Non Invasive Blood Pressure systolic",
        "Non Invasive Blood Pressure diastolic",
        "Non Invasive Blood Pressure mean",
        "Arterial Blood Pressure systolic",
        "Arterial Blood Pressure diastolic",
        "Arterial Blood Pressure mean",
        "Blood Pressure",
    ),
    "blood pressure": (
        "Non Invasive Blood Pressure systolic",
        "Non Invasive Blood Pressure diastolic",
        "Non Invasive Blood Pressure mean",
        "Arterial Blood Pressure systolic",
        "Arterial Blood Pressure diastolic",
        "Arterial Blood Pressure mean",
        "Blood Pressure",
    ),
    "sbp": ("Non Invasive Blood Pressure systolic", "Arterial Blood Pressure systolic"),
    "systolic blood pressure": ("Non Invasive Blood Pressure systolic", "Arterial Blood Pressure systolic"),
    "dbp": ("Non Invasive Blood Pressure diastolic", "Arterial Blood Pressure diastolic"),
    "diastolic blood pressure": ("Non Invasive Blood Pressure diastolic", "Arterial Blood Pressure diastolic"),
    "map": ("Non Invasive Blood Pressure mean", "Arterial Blood Pressure mean"),
    "mean arterial pressure": ("Non Invasive Blood Pressure mean", "Arterial Blood Pressure mean"),
    "rr": ("Respiratory Rate",),
    "resp rate": ("Respiratory Rate",),
    "respiratory rate": ("Respiratory Rate",),
    "spo2": ("O2 saturation pulseoxymetry",),
    "sao2": ("O2 saturation pulseoxymetry",),
    "o2 sat": ("O2 saturation pulseoxymetry",),
    "oxygen saturation": ("O2 saturation pulseoxymetry",),
    "temp": ("Temperature Fahrenheit", "Temperature Celsius"),
    "temperature": ("Temperature Fahrenheit", "Temperature Celsius"),
    "weight": ("Daily Weight", "Admission Weight (Kg)", "Admission Weight (lbs.)", "Weight (Lbs)"),
    "body weight": ("Daily Weight", "Admission Weight (Kg)", "Admission Weight (lbs.)", "Weight (Lbs)"),
    "height": ("Height (cm)", "Height", "Height (Inches)"),
    "bmi": ("BMI (kg/m2)", "BMI"),
    "gcs": ("GCS - Eye Opening", "GCS - Verbal Response", "GCS - Motor Response"),
}

# ICU chart items that count as vital signs when Observation.search has no code (MIMIC-IV d_items ids):
# heart rate, arterial and non-invasive BP, respiratory rate, SpO2, temperature, weights.
VITAL_ITEMIDS = frozenset(
    {220045, 220050, 220051, 220052, 220179, 220180, 220181, 220210, 224690, 220277, 223761, 223762, 224639, 226512}
)
VITAL_CATEGORIES = ("Routine Vital Signs",)

_TOKEN_RE = re.compile(r"^(?:[\w./:-]+\|)?(\d+)$")


@dataclass(frozen=True)
class Resolved:
    itemids: tuple[int, ...]
    labels: dict[int, str]


def numeric_itemid(code: str) -> int | None:
    """``50912`` or a FHIR token ``mimic-iv/itemid|50912``."""
    match = _TOKEN_RE.match(code.strip())
    return int(match.group(1)) if match else None


_FLUIDS = {
    "blood": "Blood",
    "serum": "Blood",
    "plasma": "Blood",
    "urine": "Urine",
    "csf": "Cerebrospinal Fluid",
    "pleural": "Pleural",
    "ascites": "Ascites",
    "ascitic": "Ascites",
    "stool": "Stool",
}
_FLUID_PREFIX_RE = re.compile(r"^(" + "|".join(_FLUIDS) + r")\s+(.+)$", re.IGNORECASE)
_FLUID_SUFFIX_RE = re.compile(r"^(.+?)[\s,]+\(?(" + "|".join(_FLUIDS) + r")\)?$", re.IGNORECASE)


def _split_fluid(term: str) -> tuple[str, str | None]:
    """``'urine glucose'`` / ``'glucose (urine)'`` → ``('glucose', 'Urine')``."""
    if m_ := _FLUID_PREFIX_RE.match(term):
        return m_.group(2).strip(), _FLUIDS[m_.group(1).lower()]
    if m_ := _FLUID_SUFFIX_RE.match(term):
        return m_.group(1).strip(), _FLUIDS[m_.group(2).lower()]
    return term, None


def prefer_blood(rows: list[tuple[int, str, str | None]]) -> list[tuple[int, str, str | None]]:
    """The same label exists for several fluids ("Glucose": blood and urine); unqualified means blood."""
    blood = [r for r in rows if (r[2] or "").lower() == "blood"]
    return blood if blood and len(blood) < len(rows) else rows


def _resolve_sql(
    *, code: str, model: type[m.DLabItem] | type[m.DItem], aliases: dict[str, tuple[str, ...]]
) -> Resolved:
    """``code`` against ``model``'s labels, in SQL; :func:`resolve_lab` and :func:`resolve_vital` memoise it."""
    manager = model.objects
    lab = model is m.DLabItem
    itemid = numeric_itemid(code)
    if itemid is not None:
        rows = list(manager.filter(itemid=itemid).values_list("itemid", "label"))
        return Resolved(tuple(r[0] for r in rows), dict(rows))
    term = code.strip()
    if "|" in term:  # FHIR token with a text code: keep the code part
        term = term.rsplit("|", 1)[1].strip()
    candidates = [(term, None)]
    if lab:
        bare, fluid = _split_fluid(term)
        if fluid is not None:
            candidates.insert(0, (bare, fluid))
    for text, fluid in candidates:
        key = text.lower()
        steps = [Q(label__iexact=text)]
        if key in aliases:
            steps.append(Q(label__in=aliases[key]))
        # Whole word first ("ph" must not match "Phosphate"), then any substring.
        steps.append(Q(label__iregex=rf"(^|[^a-z0-9]){re.escape(key)}([^a-z0-9]|$)"))
        steps.append(Q(label__icontains=text))
        for q in steps:
            qs = manager.filter(q)
            if fluid is not None:
                qs = qs.filter(fluid__iexact=fluid)
            columns = ("itemid", "label", "fluid") if lab else ("itemid", "label", "category")
            rows = list(qs.order_by("itemid").values_list(*columns)[:50])
            if lab and fluid is None:
                rows = prefer_blood(rows)
            if rows:
                return Resolved(tuple(r[0] for r in rows), {r[0]: r[1] for r in rows})
    if "," in term:  # several codes at once ("creatinine, potassium"); "Calcium, Total" matched above
        parts = [_resolve_sql(code=part, model=model, aliases=aliases) for part in term.split(",") if part.strip()]
        if parts and all(p.itemids for p in parts):
            labels = {k: v for p in parts for k, v in p.labels.items()}
            return Resolved(tuple(dict.fromkeys(i for p in parts for i in p.itemids)), labels)
    return Resolved((), {})


def exact_lab_itemids(code: str) -> QuerySet:
    """Subquery for the hot path: exact label, blood preferred when the label exists for several fluids."""
    same = m.DLabItem.objects.filter(label__iexact=code)
    return same.filter(Q(fluid__iexact="Blood") | ~Exists(same.filter(fluid__iexact="Blood"))).values("itemid")


def resolve_lab(code: str) -> Resolved:
    return _resolve(code=code, lab=True)


def resolve_vital(code: str) -> Resolved:
    return _resolve(code=code, lab=False)


def suggestions(code: str, *, limit: int = 5) -> list[str]:
    """Closest lab/vital labels, for the hint of an unknown code."""
    labels = set(m.DLabItem.objects.exclude(label=None).values_list("label", flat=True).distinct())
    labels |= set(m.DItem.objects.values_list("label", flat=True).distinct())
    by_lower: dict[str, str] = {lab.lower(): lab for lab in labels}
    close = difflib.get_close_matches(code.lower(), list(by_lower), n=limit, cutoff=0.5)
    return [by_lower[c] for c in close]


def omr_names() -> frozenset[str]:
    """The distinct outpatient (omr) result names (at most 500), kept with the memo."""
    return _snapshot().omr_names


# --- the in-process memo ------------------------------------------------------------------------

CACHE_TTL_SECONDS = 60.0
_MEMO_MAX = 4096  # resolved codes kept per dictionary; the codes an assistant types repeat a lot


@dataclass
class _Snapshot:
    """What the tools keep between calls: the omr result names and the codes resolved so far."""

    omr_names: frozenset[str]
    loaded_at: float
    labs: dict[str, Resolved] = field(default_factory=dict)
    vitals: dict[str, Resolved] = field(default_factory=dict)


_lock = threading.Lock()
_current: _Snapshot | None = None
_generation = 0  # bumped by clear_cache: a load that started before the clear is not kept


def clear_cache() -> None:
    """Forget the memo (after an import; tests call it before each test)."""
    global _current, _generation
    _generation += 1
    _current = None


def _snapshot() -> _Snapshot:
    global _current
    snap = _current
    if snap is not None and time.monotonic() - snap.loaded_at < CACHE_TTL_SECONDS:
        return snap
    # Expired: one thread reloads while the others keep answering from the old memo; with none at
    # all they wait for the first load instead of all querying.
    if not _lock.acquire(blocking=snap is None):
        return snap
    try:
        snap = _current
        if snap is None or time.monotonic() - snap.loaded_at >= CACHE_TTL_SECONDS:
            generation = _generation
            snap = _load()
            if generation == _generation:
                _current = snap
        return snap
    finally:
        _lock.release()


def _load() -> _Snapshot:
    loaded_at = time.monotonic()  # before the query: an import committed meanwhile is seen at the next load
    omr = frozenset(m.Omr.objects.values_list("result_name", flat=True).distinct()[:500])
    return _Snapshot(omr_names=omr, loaded_at=loaded_at)


def _resolve(*, code: str, lab: bool) -> Resolved:
    snap = _snapshot()
    memo = snap.labs if lab else snap.vitals
    found = memo.get(code)
    if found is None:
        model, aliases = (m.DLabItem, LAB_ALIASES) if lab else (m.DItem, VITAL_ALIASES)
        found = _resolve_sql(code=code, model=model, aliases=aliases)
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[code] = found
    return found
