"""Values of the patient health memory: record sources, facts and the memory itself.

Everything here is plain data with a JSON round trip (``to_dict`` / ``from_dict``) because the
memory is stored on the Session row as JSON. A fact always names where it came from and quotes
the record verbatim, so :mod:`scenarios.patient.verify` can re-read the source and check it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

# Fact categories, in the order the memory lists them.
CATEGORIES = (
    "chief_complaint",
    "symptom",
    "history",
    "medication",
    "adherence",
    "allergy",
    "social",
    "functional",
    "pain",
)
# HPI slots (symptom category); "modifiers" covers aggravating and relieving factors.
SYMPTOM_SLOTS = ("onset", "location", "duration", "character", "severity", "modifiers", "associated")


@dataclass(frozen=True)
class Source:
    """Where a fact was read.

    ``kind == "note"``: ``table`` is the note table, ``key`` is ``{"note_id": ...}``, ``section`` the
    discharge-note heading and ``start``/``end`` the character span of the evidence in the full note
    text. ``kind == "table"``: ``key`` holds the columns that find the row and ``field`` the column
    the evidence was read from.

    ``visible_from`` says why the source is visible when its own time is not: ``"admission"`` marks
    an admission-time section of the session admission's discharge note, known to the patient from
    ``admittime`` (the admission's start) although the note is charted later (see
    :mod:`scenarios.patient.memory`). ``None``: the source's own time decides, as for every record.
    """

    kind: str
    table: str
    key: dict[str, Any]
    section: str | None = None
    start: int | None = None
    end: int | None = None
    field: str | None = None
    charttime: str | None = None
    visible_from: str | None = None
    admittime: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {
            "kind": self.kind,
            "table": self.table,
            "key": dict(self.key),
            "section": self.section,
            "start": self.start,
            "end": self.end,
            "field": self.field,
            "charttime": self.charttime,
        }
        if self.visible_from is not None:  # only when set: memories stored before keep their exact JSON
            data["visible_from"] = self.visible_from
            data["admittime"] = self.admittime
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Source:
        return cls(
            kind=data["kind"],
            table=data["table"],
            key=dict(data["key"]),
            section=data.get("section"),
            start=data.get("start"),
            end=data.get("end"),
            field=data.get("field"),
            charttime=data.get("charttime"),
            visible_from=data.get("visible_from"),
            admittime=data.get("admittime"),
        )

    @property
    def note_id(self) -> str | None:
        return self.key.get("note_id") if self.kind == "note" else None


@dataclass(frozen=True)
class Fact:
    """One thing the patient may say. ``value`` is what is said; ``evidence`` the verbatim record text.

    ``value`` and every string in ``attrs`` are substrings of ``evidence`` (checked by the verifier),
    so nothing the patient says is paraphrased from outside the record.
    """

    id: str
    category: str
    slot: str
    value: str
    evidence: str
    source: Source
    attrs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "slot": self.slot,
            "value": self.value,
            "evidence": self.evidence,
            "source": self.source.to_dict(),
            "attrs": dict(self.attrs),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fact:
        return cls(
            id=data["id"],
            category=data["category"],
            slot=data["slot"],
            value=data["value"],
            evidence=data["evidence"],
            source=Source.from_dict(data["source"]),
            attrs=dict(data.get("attrs") or {}),
        )


def make_fact(
    *, category: str, slot: str, value: str, evidence: str, source: Source, attrs: dict[str, Any] | None = None
) -> Fact:
    """A fact with a stable id derived from what it says and where (same record → same id)."""
    basis = f"{category}|{slot}|{source.table}|{sorted(source.key.items())}|{source.start}|{source.end}|{value}"
    digest = hashlib.sha1(basis.encode("utf-8"), usedforsecurity=False).hexdigest()[:10]
    return Fact(
        id=f"{category}.{slot}.{digest}",
        category=category,
        slot=slot,
        value=value,
        evidence=evidence,
        source=source,
        attrs=dict(attrs or {}),
    )


@dataclass
class HealthMemory:
    """What the patient knows about themselves, as of ``current_date`` (ISO date)."""

    subject_id: int
    hadm_id: int | None
    current_date: str
    facts: list[Fact] = field(default_factory=list)
    # Facts the verifier refused, with the reason (kept for review, never said).
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def by_id(self, fact_id: str) -> Fact | None:
        return next((f for f in self.facts if f.id == fact_id), None)

    def of(self, category: str, slot: str | None = None) -> list[Fact]:
        return [f for f in self.facts if f.category == category and (slot is None or f.slot == slot)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject_id": self.subject_id,
            "hadm_id": self.hadm_id,
            "current_date": self.current_date,
            "facts": [f.to_dict() for f in self.facts],
            "dropped": [dict(d) for d in self.dropped],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HealthMemory:
        return cls(
            subject_id=int(data["subject_id"]),
            hadm_id=None if data.get("hadm_id") is None else int(data["hadm_id"]),
            current_date=str(data["current_date"]),
            facts=[Fact.from_dict(f) for f in data.get("facts") or []],
            dropped=[dict(d) for d in data.get("dropped") or []],
        )
