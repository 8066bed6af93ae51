"""Character-span helpers over discharge-note text.

``ehr.fhir.notes.split_sections`` returns tidied section texts without offsets; the memory needs
spans into the original note so a verifier can re-read the exact characters, hence this module.
Only the fixed discharge headings count as sections (same list as the EHR tools).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ehr.fhir.notes import DISCHARGE_HEADINGS, normalise

_HEADING_RE = re.compile(
    r"^[ \t]*("
    + "|".join(re.escape(h).replace(r"\ ", r"[ \t]+") for h in DISCHARGE_HEADINGS)
    + r"|Follow[- ]?up Instructions)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
DEID = "___"  # MIMIC's de-identification mark; never part of a fact


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class SectionSpan:
    title: str
    start: int  # first character of the body (after the heading's colon)
    end: int

    @property
    def key(self) -> str:
        return normalise(self.title)


def _canonical(raw: str) -> str:
    key = normalise(raw)
    for heading in DISCHARGE_HEADINGS:
        if normalise(heading) == key:
            return heading
    return "Followup Instructions"


def section_spans(text: str) -> list[SectionSpan]:
    matches = list(_HEADING_RE.finditer(text))
    out = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out.append(SectionSpan(_canonical(match.group(1)), match.end(), end))
    return out


def find_section(text: str, title: str) -> SectionSpan | None:
    """First section with that heading (real notes occasionally repeat one; the first is the admission's)."""
    key = normalise(title)
    return next((s for s in section_spans(text) if s.key == key), None)


def section_of(text: str, start: int) -> str | None:
    for section in section_spans(text):
        if section.start <= start < section.end:
            return section.title
    return None


def strip_span(text: str, start: int, end: int, *, chars: str = " \t\r\n.,;:-*•") -> Span | None:
    """The span without surrounding punctuation/space; None if nothing is left."""
    while start < end and text[start] in chars:
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    if start >= end:
        return None
    return Span(start, end, text[start:end])


def lines(text: str, start: int, end: int) -> Iterator[Span]:
    """Non-empty lines of ``text[start:end]`` with absolute offsets (stripped)."""
    pos = start
    for raw in text[start:end].split("\n"):
        span = strip_span(text, pos, pos + len(raw), chars=" \t\r")
        if span is not None:
            yield span
        pos += len(raw) + 1


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])|\n\s*\n|\n(?=\s*[-*•\d])")
_CLAUSE_END = re.compile(r";|,\s+(?:and\s+|but\s+)?|\s+but\s+")


def _split(text: str, start: int, end: int, pattern: re.Pattern[str]) -> Iterator[Span]:
    pos = start
    for match in pattern.finditer(text, start, end):
        span = strip_span(text, pos, match.start())
        if span is not None:
            yield span
        pos = match.end()
    span = strip_span(text, pos, end)
    if span is not None:
        yield span


def sentences(text: str, start: int, end: int) -> Iterator[Span]:
    """Sentences of a free-text stretch; a blank line or a list item also ends one."""
    return _split(text, start, end, _SENTENCE_END)


def clauses(text: str, span: Span) -> Iterator[Span]:
    """Parts of a sentence split at semicolons and commas."""
    return _split(text, span.start, span.end, _CLAUSE_END)


def clean(span: Span | None, *, max_len: int = 240) -> Span | None:
    """A span usable as evidence: no de-identified part, not too long, has letters."""
    if span is None or DEID in span.text or len(span.text) > max_len:
        return None
    return span if re.search(r"[A-Za-z]", span.text) else None


_DANGLING = {"to", "in", "at", "on", "with", "of", "for", "age", "s/p", "from", "since", "x", "and", "or", "by", "dr"}


def before_deid(text: str, span: Span) -> Span | None:
    """The part of a list item before its first ``___`` ("CAD s/p DES to LAD ___" → "CAD s/p DES to LAD"),
    unless what is left dangles ("stroke at age ___") and would say something the record does not."""
    cut = span.text.find(DEID)
    if cut < 0:
        return span
    head = strip_span(text, span.start, span.start + cut)
    if head is None or not re.search(r"[A-Za-z]{2}", head.text):
        return None
    last = head.text.split()[-1].lower().strip(".,;:()")
    return None if last in _DANGLING else head


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9'-]+", text.lower())}
