"""The chronic background of a note: past history, allergies, social history and function.

These facts do not change within a stay, so they are read from the note chosen as background
(see :func:`scenarios.patient.extract.facts_from_note`). Social history is read by label
(``Smoking: ...``) when the note has labels, else by keyword-classified sentences; functional
status comes from social history and from the discharge condition's activity and mental status.
"""

from __future__ import annotations

import re

from scenarios.patient.note_facts import NoteFacts
from scenarios.patient.text import Span, before_deid, clauses, clean, find_section, lines, sentences, strip_span

_LIST_MARKER_RE = re.compile(r"[-*•#\s]*(\d{1,2}[.)]\s+)?")
_NKA_RE = re.compile(r"no known (drug )?allergies|\bnkda\b|no allergies|\bnka\b", re.I)
_SOCIAL_LABEL_RE = re.compile(
    r"(?P<label>Lives|Living situation|Home|Smoking|Tobacco|Alcohol|EtOH|Illicit drugs|Illicits|Drugs|"
    r"Substance use|Functional status|Occupation|Work|Employment|Support)\s*:\s*"
    r"(?P<value>[^\n]*?)(?=\.\s+[A-Z][A-Za-z ]{1,25}:|\.?\s*\n|\.?\s*$)",
    re.I,
)
_SOCIAL_SLOTS = {
    "lives": "living_situation",
    "living situation": "living_situation",
    "home": "living_situation",
    "smoking": "smoking",
    "tobacco": "smoking",
    "alcohol": "alcohol",
    "etoh": "alcohol",
    "illicit drugs": "substance_use",
    "illicits": "substance_use",
    "drugs": "substance_use",
    "substance use": "substance_use",
    "occupation": "occupation",
    "work": "occupation",
    "employment": "occupation",
    "support": "support",
    "functional status": "functional",
}
_SOCIAL_FREE = (
    ("smoking", re.compile(r"\b(smok\w*|tobacco|cigarettes?|pack[- ]years?|ppd)\b", re.I)),
    ("alcohol", re.compile(r"\b(alcohol|etoh|drinks?|beer|wine|liquor)\b", re.I)),
    ("substance_use", re.compile(r"\b(illicit|drug use|cocaine|heroin|marijuana|ivdu|opioids?)\b", re.I)),
    ("living_situation", re.compile(r"\b(lives|living|nursing home|assisted living|homeless)\b", re.I)),
    ("occupation", re.compile(r"\b(works?|worked|retired|employed|occupation|job)\b", re.I)),
)
FUNCTIONAL_SLOTS = (
    ("falls", re.compile(r"\b(falls?|fell|fallen)\b", re.I)),
    ("self_care", re.compile(r"\b(ADLs?|bathing|dressing|toileting|self-care|feeding)\b", re.I)),
    ("mobility", re.compile(r"\b(walker|cane|wheelchair|ambulat\w*|walk\w*|bed-?bound|bed bound)\b", re.I)),
    ("exercise_tolerance", re.compile(r"\b(stairs|steps|blocks?|flights?|exertion|mailbox|at rest)\b", re.I)),
    ("cognition", re.compile(r"\b(mental status|confus\w*|dementia|oriented|memory|coherent)\b", re.I)),
)


def past_history(note: NoteFacts) -> None:
    for line in note.section_lines("Past Medical History"):
        if line.text.rstrip().endswith(":"):
            continue  # a sub-heading such as "PAST ONCOLOGIC HISTORY:"
        parts = list(clauses(note.text, line)) if len(line.text) > 120 else [line]
        for part in parts:
            marker = _LIST_MARKER_RE.match(part.text)
            part = strip_span(note.text, part.start + marker.end(), part.end)
            part = clean(before_deid(note.text, part), max_len=120) if part else None
            if part is not None and len(note.facts) < 400:
                note.add(category="history", slot="condition", span=part, section="Past Medical History")


def allergies(note: NoteFacts) -> None:
    section = find_section(note.text, "Allergies")
    if section is None:
        return
    nka = _NKA_RE.search(note.text, section.start, section.end)
    if nka:
        span = Span(nka.start(), nka.end(), nka.group(0))
        note.add(category="allergy", slot="none", span=span, section="Allergies")
        return
    for line in lines(note.text, section.start, section.end):
        for part in re.finditer(r"[^/\n]+", line.text):
            span = clean(strip_span(note.text, line.start + part.start(), line.start + part.end()), max_len=80)
            if span is not None:
                note.add(category="allergy", slot="substance", span=span, section="Allergies")


def social(note: NoteFacts) -> None:
    section = find_section(note.text, "Social History")
    if section is None:
        return
    title = "Social History"
    labelled = list(_SOCIAL_LABEL_RE.finditer(note.text, section.start, section.end))
    for match in labelled:
        span = clean(strip_span(note.text, match.start("value"), match.end("value")))
        slot = _SOCIAL_SLOTS[match.group("label").lower()]
        if span is None:
            continue
        if slot == "functional":
            functional(note, span=span, section=title)
            continue
        note.add(category="social", slot=slot, span=span, section=title)
        if slot == "living_situation" and re.search(r"\bwith\b", span.text, re.I):
            note.add(category="social", slot="support", span=span, section=title)
    if labelled:
        return
    for sentence in sentences(note.text, section.start, section.end):
        span = clean(sentence)
        if span is None:
            continue
        for slot, rx in _SOCIAL_FREE:
            if rx.search(span.text):
                note.add(category="social", slot=slot, span=span, section=title)
        functional(note, span=span, section=title)


def functional(note: NoteFacts, *, span: Span, section: str) -> None:
    for slot, rx in FUNCTIONAL_SLOTS:
        if rx.search(span.text):
            note.add(category="functional", slot=slot, span=span, section=section)


def discharge_condition(note: NoteFacts) -> None:
    """``Activity Status: Ambulatory - Independent.`` and ``Mental Status: ...`` describe the patient's function."""
    for line in note.section_lines("Discharge Condition"):
        match = re.match(r"(Activity Status|Mental Status)\s*:\s*", line.text, re.I)
        if match is None:
            continue
        span = clean(strip_span(note.text, line.start + match.end(), line.end))
        if span is not None:
            slot = "mobility" if match.group(1).lower().startswith("activity") else "cognition"
            note.add(category="functional", slot=slot, span=span, section="Discharge Condition")
