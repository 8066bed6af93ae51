"""Split MIMIC-IV-Note texts into their sections.

Discharge notes use a fixed set of title-case headings (``Chief Complaint:``, ...); only those are
treated as headings, because the body is full of ad-hoc "Label:" lines (``VS:``, ``HEENT:``)
that are not sections. Radiology reports use upper-case headings (``FINDINGS:``, ``IMPRESSION:``),
recognised by shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DISCHARGE_HEADINGS = (
    "Service",
    "Allergies",
    "Attending",
    "Chief Complaint",
    "Major Surgical or Invasive Procedure",
    "History of Present Illness",
    "Past Medical History",
    "Social History",
    "Family History",
    "Physical Exam",
    "Pertinent Results",
    "Brief Hospital Course",
    "Medications on Admission",
    "Discharge Medications",
    "Discharge Disposition",
    "Discharge Diagnosis",
    "Discharge Condition",
    "Discharge Instructions",
    "Followup Instructions",
)

# Abbreviations an assistant may pass as a section `keyword`; keys and values are normalised names.
SECTION_ALIASES = {
    "hpi": "historyofpresentillness",
    "presentillness": "historyofpresentillness",
    "pmh": "pastmedicalhistory",
    "medicalhistory": "pastmedicalhistory",
    "cc": "chiefcomplaint",
    "complaint": "chiefcomplaint",
    "hospitalcourse": "briefhospitalcourse",
    "course": "briefhospitalcourse",
    "admissionmedications": "medicationsonadmission",
    "homemedications": "medicationsonadmission",
    "dischargemeds": "dischargemedications",
    "diagnosis": "dischargediagnosis",
    "diagnoses": "dischargediagnosis",
    "followup": "followupinstructions",
    "exam": "physicalexam",
    "labs": "pertinentresults",
    "results": "pertinentresults",
    "procedures": "majorsurgicalorinvasiveprocedure",
    "procedure": "majorsurgicalorinvasiveprocedure",
    "allergy": "allergies",
    "social": "socialhistory",
    "family": "familyhistory",
}

_DISCHARGE_RE = re.compile(
    r"^[ \t]*("
    + "|".join(re.escape(h).replace(r"\ ", r"[ \t]+") for h in DISCHARGE_HEADINGS)
    + r"|Follow[- ]?up Instructions)[ \t]*:[ \t]*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_RADIOLOGY_RE = re.compile(r"^[ \t]*([A-Z][A-Z /&()-]{2,40}?)[ \t]*:[ \t]*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Section:
    title: str
    text: str

    @property
    def key(self) -> str:
        return normalise(self.title)


def normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _canonical_title(raw: str) -> str:
    key = normalise(raw)
    for heading in DISCHARGE_HEADINGS:
        if normalise(heading) == key:
            return heading
    return "Followup Instructions" if key == "followupinstructions" else raw.strip()


def split_sections(text: str, *, kind: str) -> list[Section]:
    """Sections in note order; text before the first heading becomes a ``Header`` section."""
    pattern = _DISCHARGE_RE if kind == "discharge" else _RADIOLOGY_RE
    matches = list(pattern.finditer(text))
    sections: list[Section] = []
    head = text[: matches[0].start()] if matches else text
    if head.strip():
        sections.append(Section("Header", _tidy(head)))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = (match.group(2) + text[match.end() : end]).strip("\n")
        title = _canonical_title(match.group(1)) if kind == "discharge" else match.group(1).strip().title()
        sections.append(Section(title, _tidy(body)))
    return sections


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return "\n".join(lines).strip()


def matches_section(section: Section, query: str) -> bool:
    """``query`` names the section exactly, by alias, or as a part of its title ("instructions")."""
    q = normalise(query)
    if not q:
        return False
    q = SECTION_ALIASES.get(q, q)
    return section.key == q or q in section.key
