"""Facts from one discharge note: chief complaint, HPI slots, history, meds, adherence, allergies, social.

Works on the labelled lines the synthetic cohort writes (``Onset: ...``) and falls back to
keyword-classified sentences for real MIMIC-IV free text. Every fact points at the exact
characters it quotes; anything containing ``___`` is skipped, never guessed around.

This module reads one note by calling each section's reader: the presenting story in
:mod:`~scenarios.patient.extract_story`, medication lists in :mod:`~scenarios.patient.extract_meds`,
the chronic background in :mod:`~scenarios.patient.extract_background`; they all write into
:class:`~scenarios.patient.note_facts.NoteFacts`.
"""

from __future__ import annotations

from scenarios.patient.extract_background import allergies, discharge_condition, past_history, social
from scenarios.patient.extract_meds import medications
from scenarios.patient.extract_story import chief_complaint, hpi
from scenarios.patient.facts import Fact
from scenarios.patient.note_facts import NoteFacts
from scenarios.patient.verify import ADMISSION_SECTIONS


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
