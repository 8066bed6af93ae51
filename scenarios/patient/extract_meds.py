"""Medication lists of a note: each line's drug, dose, unit, route and frequency, as written.

Numbered lines (``1. Aspirin 81 mg PO DAILY``) are read one per line; older notes that list the
drugs in a sentence are split into clauses that carry a dose. The names found are returned so the
HPI reader can tell an adherence statement about one of the patient's drugs.
"""

from __future__ import annotations

import re

from scenarios.patient.note_facts import NoteFacts
from scenarios.patient.text import clauses, clean, find_section, lines, strip_span

_MED_LINE_RE = re.compile(r"^\s*\d{1,2}[.)]\s*")
_DOSE_RE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?)\s*(mg|mcg|g|gm|units?|UNIT|mEq|mL|puffs?|NEB|tabs?|caps?|%)(?![A-Za-z])",
    re.I,
)
_ROUTE_RE = re.compile(r"(?<![A-Za-z])(PO/NG|PO|IV|SC|SQ|SL|IH|INH|NG|PR|TD|TP|TOP|IM|NEB)(?![A-Za-z])")
_FREQ_RE = re.compile(
    r"(?<![A-Za-z])(DAILY|BID|TID|QID|Q\d{1,2}H|QHS|QAM|QPM|QOD|PRN|ONCE|WEEKLY|CONTINUOUS|HS)(?![A-Za-z])"
)


def parse_med(text: str) -> dict[str, str] | None:
    """Name, dose, unit, route, frequency of one medication line, each as written (or absent)."""
    # A percentage is part of a product name ("Albuterol 0.083% Neb Soln"), not the dose.
    dose = next((d for d in _DOSE_RE.finditer(text) if d.group(2) != "%"), None)
    route = _ROUTE_RE.search(text)
    cut = min(m.start() for m in (dose, route) if m) if (dose or route) else len(text)
    name = text[:cut].strip(" ,;:-")
    if not name or not re.match(r"[A-Za-z]", name) or len(name) > 60:
        return None
    out = {"name": name}
    if dose:
        out["dose"], out["unit"] = dose.group(1), dose.group(2)
    if route:
        out["route"] = route.group(1)
    freq = _FREQ_RE.search(text, route.end() if route else (dose.end() if dose else 0))
    if freq:
        out["frequency"] = freq.group(1)
    return out


def medications(note: NoteFacts, *, title: str, slot: str) -> list[str]:
    """Medication-list facts from ``title``; returns the drug names found (for adherence matching)."""
    section = find_section(note.text, title)
    if section is None:
        return []
    items = list(lines(note.text, section.start, section.end))
    numbered = [s for s in items if _MED_LINE_RE.match(s.text)]
    if numbered:
        spans = [strip_span(note.text, s.start + _MED_LINE_RE.match(s.text).end(), s.end) for s in numbered]
    else:  # older notes: "aspirin 81 mg daily, lisinopril 10 mg daily"
        spans = [c for s in items for c in clauses(note.text, s) if _DOSE_RE.search(c.text)]
    names = []
    for span in spans[:30]:
        span = clean(span, max_len=160)
        med = parse_med(span.text) if span else None
        if span is None or med is None:
            continue
        note.add(category="medication", slot=slot, span=span, section=title, attrs=med)
        names.append(med["name"])
    return names
