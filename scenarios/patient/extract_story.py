"""The presenting story of a note: chief complaint and History of Present Illness.

The HPI gives the symptom slots (onset, location, duration, character, severity, modifiers,
associated symptoms), adherence statements, drugs mentioned, a pain score and functional hints.
Labelled lines (``Onset: ...``, as the synthetic cohort writes them) are read by label; real free
text falls back to sentences classified by keywords, the first matching pattern deciding the slot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scenarios.patient.note_facts import NoteFacts, drugs_in
from scenarios.patient.text import Span, clauses, clean, find_section, lines, sentences, strip_span

_HPI_LABELS = {
    "onset": "onset",
    "location": "location",
    "radiation": "location",
    "duration": "duration",
    "timing": "duration",
    "character": "character",
    "quality": "character",
    "severity": "severity",
    "modifying factors": "modifiers",
    "modifiers": "modifiers",
    "aggravating factors": "modifiers",
    "relieving factors": "modifiers",
    "alleviating factors": "modifiers",
    "associated symptoms": "associated",
    "associated signs and symptoms": "associated",
    "medication adherence": "adherence",
    "adherence": "adherence",
    "compliance": "adherence",
}
_LABEL_RE = re.compile(r"^(?P<label>[A-Za-z ]{3,40}?)\s*:\s*(?P<value>.+)$")
# Free-text HPI: the first pattern a sentence matches decides its slot.
_FREE_SLOTS = (
    ("severity", re.compile(r"\b\d{1,2}/10\b|\b(mild|moderate|severe|worst)\b", re.I)),
    (
        "duration",
        re.compile(
            r"\b(for|x|lasting|over the (past|last))\s+(\d+|a|an|one|two|three|four|five|several|few)\s+"
            r"(minutes?|hours?|days?|weeks?|months?|years?)\b",
            re.I,
        ),
    ),
    ("onset", re.compile(r"\b(began|begun|started|onset|ago|this morning|last night|yesterday|woke)\b", re.I)),
    ("modifiers", re.compile(r"\b(worse|better|reliev\w*|aggravat\w*|exacerbat\w*|alleviat\w*)\b", re.I)),
    ("location", re.compile(r"\b(radiat\w*|located|substernal|epigastric|periumbilical|flank)\b", re.I)),
    ("character", re.compile(r"\b(sharp|dull|pressure|burning|stabbing|crampy|cramping|aching|squeezing)\b", re.I)),
    ("associated", re.compile(r"\b(associated|accompanied|endorses|also (reports|notes|had|has))\b", re.I)),
)
_ADHERENCE_RE = re.compile(
    r"\b(miss(ed|es|ing)?|ran out|run(ning)? out|non-?complian\w*|non-?adheren\w*|stopped taking|not taking|"
    r"(has not|hasn't|had not|hadn't) been taking|skip(ped|s|ping)?|compliant|adherent|as prescribed|"
    r"pill ?box|forg[eo]t\w*|because of cost|self-discontinued|continued)\b",
    re.I,
)
NONADHERENT_RE = re.compile(
    r"\b(miss(ed|es|ing)?|ran out|run(ning)? out|non-?complian\w*|non-?adheren\w*|stopped|not taking|"
    r"(has not|hasn't|had not|hadn't) been taking|skip(ped|s|ping)?|forg[eo]t\w*|because of cost|"
    r"self-discontinued)\b",
    re.I,
)
_PAIN_SCORE_RE = re.compile(r"\b(\d{1,2})/10\b")
# Stricter in the HPI, where "walking his dog" or "on exertion" describe the symptom, not function.
_HPI_FUNCTIONAL = (
    ("falls", re.compile(r"\b(falls?|fell|fallen)\b", re.I)),
    ("self_care", re.compile(r"\b(ADLs?|bathing|dressing|toileting|self-care)\b", re.I)),
    (
        "mobility",
        re.compile(r"\b(walker|cane|wheelchair|bed-?bound|limiting walking|(can no longer|unable to) walk)\b", re.I),
    ),
    ("exercise_tolerance", re.compile(r"\b(stairs|steps|blocks?|flights?|mailbox|at rest|walking across)\b", re.I)),
)
# "... who p/w <complaint>": the complaint starts after the presenting phrase.
_PRESENTS_RE = re.compile(
    r"\b(who )?(p/w|presents? with|presented with|presenting with|c/o|complain(s|ed|ing) of)\s+", re.I
)


def chief_complaint(note: NoteFacts) -> None:
    for span in note.section_lines("Chief Complaint")[:2]:
        span = clean(span, max_len=160)
        if span is not None:
            note.add(category="chief_complaint", slot="chief_complaint", span=span, section="Chief Complaint")


def hpi(note: NoteFacts, *, home_drugs: Iterable[str]) -> None:
    """Symptom slots, adherence, mentioned drugs, pain score and functional hints from the HPI."""
    section = find_section(note.text, "History of Present Illness")
    if section is None:
        return
    title = "History of Present Illness"
    labelled = False
    for line in lines(note.text, section.start, section.end):
        match = _LABEL_RE.match(line.text)
        slot = _HPI_LABELS.get(match.group("label").strip().lower()) if match else None
        if match is None or slot is None:
            continue
        labelled = True
        value = strip_span(note.text, line.start + match.start("value"), line.end)
        value = clean(value)
        if value is None:
            continue
        if slot == "adherence":
            _adherence(note, span=value, section=title, home_drugs=home_drugs)
            continue
        note.add(category="symptom", slot=slot, span=value, section=title)
        _clause_facts(note, span=value, section=title, home_drugs=home_drugs)
    if labelled:
        return
    counts: dict[str, int] = {}
    for sentence in sentences(note.text, section.start, section.end):
        parts = [sentence] if clean(sentence) else [c for c in clauses(note.text, sentence) if clean(c)]
        parts = [_after_presenting(note.text, p) for p in parts]
        for part in parts:
            # A sentence about a drug or about taking medicines is not a symptom description.
            about_drugs = _ADHERENCE_RE.search(part.text) or drugs_in(part.text, known=home_drugs)
            slot = None if about_drugs else next((name for name, rx in _FREE_SLOTS if rx.search(part.text)), None)
            if slot is not None and counts.get(slot, 0) < 2:
                counts[slot] = counts.get(slot, 0) + 1
                note.add(category="symptom", slot=slot, span=part, section=title)
            _clause_facts(note, span=part, section=title, home_drugs=home_drugs)


def _after_presenting(text: str, span: Span) -> Span:
    match = _PRESENTS_RE.search(span.text)
    if match is None:
        return span
    return strip_span(text, span.start + match.end(), span.end) or span


def _clause_facts(note: NoteFacts, *, span: Span, section: str, home_drugs: Iterable[str]) -> None:
    for part in clauses(note.text, span):
        part = clean(part)
        if part is None:
            continue
        drugs = drugs_in(part.text, known=home_drugs)
        if _ADHERENCE_RE.search(part.text):
            _adherence(note, span=part, section=section, home_drugs=home_drugs)
        elif drugs:
            note.add(category="medication", slot="mentioned", span=part, section=section, attrs={"drugs": drugs})
        score = _PAIN_SCORE_RE.search(part.text)
        if score and section == "History of Present Illness":
            note.add(category="pain", slot="score", span=part, section=section, attrs={"score": score.group(0)})
        for slot, rx in _HPI_FUNCTIONAL:
            if rx.search(part.text) and section == "History of Present Illness":
                note.add(category="functional", slot=slot, span=part, section=section)


def _adherence(note: NoteFacts, *, span: Span, section: str, home_drugs: Iterable[str]) -> None:
    """An adherence statement; ``drug`` slot when it names a drug (that drug's adherence), else ``general``."""
    drugs = drugs_in(span.text, known=home_drugs)
    attrs = {"drugs": drugs, "nonadherent": bool(NONADHERENT_RE.search(span.text))}
    note.add(category="adherence", slot="drug" if drugs else "general", span=span, section=section, attrs=attrs)
