"""The collector every note reader writes into, and the matcher for drug names in note text.

A :class:`NoteFacts` holds one note's text and source fields; each reader of a section
(:mod:`~scenarios.patient.extract_story`, :mod:`~scenarios.patient.extract_meds`,
:mod:`~scenarios.patient.extract_background`) adds facts that point at the exact characters they
quote. :func:`drugs_in` is shared because the HPI and the adherence statements both name drugs
from the medication lists.
"""

from __future__ import annotations

from collections.abc import Iterable

from scenarios.patient.facts import Fact, Source, make_fact
from scenarios.patient.lexicon import MENTIONABLE_DRUGS
from scenarios.patient.text import Span, find_section, lines
from scenarios.patient.verify import NOTE_TABLE


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
