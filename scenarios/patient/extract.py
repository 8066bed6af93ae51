"""Facts from one discharge note: chief complaint, HPI slots, history, meds, adherence, allergies, social.

Works on the labelled lines the synthetic cohort writes (``Onset: ...``) and falls back to
keyword-classified sentences for real MIMIC-IV free text. Every fact points at the exact
characters it quotes; anything containing ``___`` is skipped, never guessed around.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scenarios.patient.facts import Fact, Source, make_fact
from scenarios.patient.lexicon import MENTIONABLE_DRUGS
from scenarios.patient.text import Span, before_deid, clauses, clean, find_section, lines, sentences, strip_span
from scenarios.patient.verify import ADMISSION_SECTIONS, NOTE_TABLE

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
_LIST_MARKER_RE = re.compile(r"[-*•#\s]*(\d{1,2}[.)]\s+)?")
_PAIN_SCORE_RE = re.compile(r"\b(\d{1,2})/10\b")
_NKA_RE = re.compile(r"no known (drug )?allergies|\bnkda\b|no allergies|\bnka\b", re.I)
_MED_LINE_RE = re.compile(r"^\s*\d{1,2}[.)]\s*")
_DOSE_RE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?)\s*(mg|mcg|g|gm|units?|UNIT|mEq|mL|puffs?|NEB|tabs?|caps?|%)(?![A-Za-z])",
    re.I,
)
_ROUTE_RE = re.compile(r"(?<![A-Za-z])(PO/NG|PO|IV|SC|SQ|SL|IH|INH|NG|PR|TD|TP|TOP|IM|NEB)(?![A-Za-z])")
_FREQ_RE = re.compile(
    r"(?<![A-Za-z])(DAILY|BID|TID|QID|Q\d{1,2}H|QHS|QAM|QPM|QOD|PRN|ONCE|WEEKLY|CONTINUOUS|HS)(?![A-Za-z])"
)
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


class NoteFacts:
    """Collects facts from one note, all sharing its source fields."""

    def __init__(self, *, note_id: str, text: str, charttime: str | None, admittime: str | None = None) -> None:
        self.note_id = note_id
        self.text = text
        self.charttime = charttime
        self.admittime = admittime  # set: the note is read before its charttime (admission-time rule)
        self.facts: list[Fact] = []

    def add(
        self, *, category: str, slot: str, span: Span, section: str, value: str | None = None, attrs: dict | None = None
    ) -> Fact:
        source = Source(
            kind="note",
            table=NOTE_TABLE,
            key={"note_id": self.note_id},
            section=section,
            start=span.start,
            end=span.end,
            charttime=self.charttime,
            visible_from=None if self.admittime is None else "admission",
            admittime=self.admittime,
        )
        fact = make_fact(
            category=category, slot=slot, value=value or span.text, evidence=span.text, source=source, attrs=attrs
        )
        if all(f.id != fact.id for f in self.facts):
            self.facts.append(fact)
        return fact

    def section_lines(self, title: str) -> Iterable[Span]:
        section = find_section(self.text, title)
        return [] if section is None else list(lines(self.text, section.start, section.end))


def drugs_in(text: str, *, known: Iterable[str]) -> list[str]:
    """Drug names (as written in ``text``) from ``known`` names and the mentionable list."""
    found: list[str] = []
    lowered = text.casefold()
    # Longest first (a brand inside a longer name is not found twice); then by name, so that names of
    # equal length come out in the same order whatever the set's hash order (deterministic memories).
    for name in sorted({*known, *MENTIONABLE_DRUGS}, key=lambda n: (-len(n), n)):
        pos = lowered.find(name.casefold()) if len(name) >= 4 else -1
        if pos < 0:
            continue
        before = lowered[pos - 1] if pos else " "
        after = lowered[pos + len(name)] if pos + len(name) < len(lowered) else " "
        written = text[pos : pos + len(name)]
        if not before.isalpha() and not after.isalpha() and all(written.casefold() not in f.casefold() for f in found):
            found.append(written)
    return found


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


def facts_from_note(
    *, note_id: str, text: str, charttime: str | None, current: bool, background: bool, home_title: str
) -> list[Fact]:
    """Facts of one note. ``current``: the session admission's note (complaint, HPI, admission meds);
    ``background``: the note read for chronic facts (history, allergies, social, function);
    ``home_title``: the section listing the home medications.
    """
    note = NoteFacts(note_id=note_id, text=text, charttime=charttime)
    home = medications(note, title=home_title, slot="home") if (current or background) else []
    if current and not home and home_title != "Discharge Medications":
        # No admission list (common in real notes): the list the patient goes home with.
        home = medications(note, title="Discharge Medications", slot="home")
    if current:
        chief_complaint(note)
        hpi(note, home_drugs=home)
    if background:
        past_history(note)
        allergies(note)
        social(note)
        discharge_condition(note)
    return note.facts


def admission_facts_from_note(*, note_id: str, text: str, charttime: str | None, admittime: str) -> list[Fact]:
    """Facts of the session admission's own note read before it is charted: the admission-time
    sections only (:data:`scenarios.patient.verify.ADMISSION_SECTIONS`), each source marked visible
    from ``admittime``. No discharge list stands in for a missing admission list, and the discharge
    condition is not read: both describe the end of the stay.
    """
    note = NoteFacts(note_id=note_id, text=text, charttime=charttime, admittime=admittime)
    home = medications(note, title="Medications on Admission", slot="home")
    chief_complaint(note)
    hpi(note, home_drugs=home)
    past_history(note)
    allergies(note)
    social(note)
    # Why: the readers above stay inside their sections; this guards the rule against a future reader.
    return [f for f in note.facts if f.source.section in ADMISSION_SECTIONS]
