"""Re-read every fact's source and keep only the facts the record supports.

A fact survives when its source row/note exists for the memory's patient, is visible at the
memory's current date (cutoff rule of :mod:`ehr.fhir.context`), the quoted evidence is exactly
there (note span, or the named column of the row), the value and every string attribute are
part of the evidence (or, for table rows, equal to the named columns), and nothing said contains
a de-identification mark.

One exception to the cutoff rule, checked only in :func:`admission_time_rows`: an admission-time
section (:data:`ADMISSION_SECTIONS`) of the memory admission's own discharge note is visible from
the admission's start, before the note is charted, when the fact's source says so
(``visible_from="admission"`` with that ``admittime``). Everything else is judged by its own time.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol

from ehr import models as m
from ehr.fhir.context import ToolContext
from scenarios.patient.facts import Fact, HealthMemory
from scenarios.patient.text import DEID, section_of


@dataclass(frozen=True)
class SourceRow:
    subject_id: int
    visible_at: dt.datetime | None  # the time the cutoff rule judges the row by
    values: dict[str, Any] = field(default_factory=dict)  # column -> value (notes: {"text": ...})


class RecordReader(Protocol):
    def read(self, *, table: str, key: dict[str, Any]) -> list[SourceRow]: ...


# What the patient told the admitting team; never the course, results or discharge plans.
ADMISSION_SECTIONS = frozenset(
    {
        "Chief Complaint",
        "History of Present Illness",
        "Past Medical History",
        "Allergies",
        "Social History",
        "Family History",
        "Medications on Admission",
    }
)
NOTE_TABLE = "mimic_note_discharge"
ADMISSION_TABLE = "mimic_admissions"

_TABLES: dict[str, tuple[type, str]] = {
    NOTE_TABLE: (m.DischargeNote, "charttime"),
    ADMISSION_TABLE: (m.Admission, "admittime"),
    "mimic_prescriptions": (m.Prescription, "starttime"),
    "mimic_chartevents": (m.ChartEvent, "charttime"),
}


class DatabaseReader:
    """Reads sources from the EHR tables (the default)."""

    def read(self, *, table: str, key: dict[str, Any]) -> list[SourceRow]:
        if table not in _TABLES or not key:
            return []
        model, time_field = _TABLES[table]
        rows = []
        for obj in model.objects.filter(**key)[:20]:
            values = {f.attname: getattr(obj, f.attname) for f in model._meta.concrete_fields}
            rows.append(SourceRow(subject_id=obj.subject_id, visible_at=getattr(obj, time_field), values=values))
        return rows


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def check_fact(*, fact: Fact, memory: HealthMemory, reader: RecordReader) -> str | None:
    """None if the record supports ``fact``, else the reason it does not."""
    context = ToolContext(current_date=dt.date.fromisoformat(memory.current_date), subject_id=memory.subject_id)
    said = [fact.value, *_strings({k: v for k, v in fact.attrs.items() if k != "columns"})]
    if any(DEID in s for s in [*said, fact.evidence]):
        return "contains a de-identified span"
    if not fact.evidence.strip() or fact.value not in fact.evidence:
        return "value is not part of the evidence"
    src = fact.source
    if src.table == ADMISSION_TABLE:  # read only to date the admission-time rule, never quoted
        return f"source {src.table} is not a fact source"
    rows = [r for r in reader.read(table=src.table, key=src.key) if r.subject_id == memory.subject_id]
    if not rows:
        return f"source {src.table} {src.key} not found for this patient"
    visible = [r for r in rows if context.time_visible(r.visible_at)]
    visible = visible or admission_time_rows(fact=fact, memory=memory, rows=rows, reader=reader, context=context)
    if not visible:
        return f"source {src.table} {src.key} is not visible on {memory.current_date}"
    rows = visible
    if src.kind == "note":
        if src.start is None or src.end is None:
            return "note source without a character span"
        text = rows[0].values.get("text") or ""
        if text[src.start : src.end] != fact.evidence:
            return "evidence is not at the cited span of the note"
        if src.section is not None and section_of(text, src.start) != src.section:
            return f"evidence is not in section {src.section!r}"
        if any(s not in fact.evidence for s in _strings(fact.attrs) if not isinstance(s, bool)):
            return "an attribute is not part of the evidence"
        return None
    columns = dict(fact.attrs.get("columns") or {})
    if src.field:
        columns[src.field] = fact.evidence
    if not columns:
        return "table source names no column"
    for row in rows:
        if all(_same(row.values.get(col), want) for col, want in columns.items()):
            return None
    return "evidence does not match the row's columns"


def admission_time_rows(
    *, fact: Fact, memory: HealthMemory, rows: list[SourceRow], reader: RecordReader, context: ToolContext
) -> list[SourceRow]:
    """The note rows the admission-time rule makes visible for ``fact`` (empty: the rule does not apply).

    The rule, stated once: the source says ``visible_from="admission"`` and names an admission-time
    section; the note row exists for the patient (``rows`` are already the patient's) and belongs to
    the memory's admission; that admission started before the cutoff, at the recorded ``admittime``.
    """
    src = fact.source
    if src.visible_from != "admission" or src.kind != "note" or src.table != NOTE_TABLE:
        return []
    if src.section not in ADMISSION_SECTIONS or memory.hadm_id is None or src.admittime is None:
        return []
    own = [r for r in rows if r.values.get("hadm_id") == memory.hadm_id]
    if not own:
        return []
    admissions = reader.read(table=ADMISSION_TABLE, key={"hadm_id": memory.hadm_id})
    started = [
        a
        for a in admissions
        if a.subject_id == memory.subject_id
        and context.time_visible(a.visible_at)
        and _same(a.visible_at, src.admittime)
    ]
    return own if started else []


def _same(actual: Any, want: Any) -> bool:
    if isinstance(actual, dt.datetime | dt.date) and isinstance(want, str):
        return actual.isoformat()[: len(want)] == want or str(actual)[: len(want)] == want
    return actual == want or (actual is not None and str(actual) == str(want))


def verify_memory(*, memory: HealthMemory, reader: RecordReader | None = None) -> HealthMemory:
    """A copy of ``memory`` holding only the supported facts; refused ones go to ``dropped`` with the reason."""
    reader = reader or DatabaseReader()
    kept, dropped = [], list(memory.dropped)
    for fact in memory.facts:
        reason = check_fact(fact=fact, memory=memory, reader=reader)
        if reason is None:
            kept.append(fact)
        else:
            dropped.append({"fact": fact.to_dict(), "reason": reason})
    return HealthMemory(
        subject_id=memory.subject_id,
        hadm_id=memory.hadm_id,
        current_date=memory.current_date,
        facts=kept,
        dropped=dropped,
    )
