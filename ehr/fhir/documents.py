"""Note-based tools: DocumentReference, DiagnosticReport (radiology), CarePlan and AllergyIntolerance.

Notes are visible from their charttime (see context.py). CarePlan and AllergyIntolerance are read
from discharge-note sections, the only place MIMIC-IV records them.
"""

from __future__ import annotations

import re
from typing import Any

from django.db.models import QuerySet

from ehr import models as m
from ehr.fhir.common import bundle, check_scope, drop_none, ref
from ehr.fhir.context import ToolContext, fmt_datetime
from ehr.fhir.notes import Section, matches_section, normalise, split_sections

_NOTE_TYPES = {
    "discharge-summary": (m.DischargeNote, "18842-5", "Discharge summary"),
    "radiology": (m.RadiologyNote, "18748-4", "Diagnostic imaging study"),
}
_LOINC = "http://loinc.org"
_NO_KNOWN_ALLERGY = re.compile(r"no known (drug )?allergies|nkda|no allergies|nka\b", re.IGNORECASE)
_ALLERGY_CLINICAL = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
# The released contract has no _count for notes; newest first, this many.
NOTE_COUNT = 5
REPORT_COUNT = 10
# How note sections are split: the section grammar of each note kind (ehr.fhir.notes).
_SPLIT_KIND = {"discharge-summary": "discharge", "radiology": "radiology"}


def _notes(
    *, model: type[m.DischargeNote] | type[m.RadiologyNote], args: dict[str, Any], context: ToolContext
) -> QuerySet:
    qs = model.objects.filter(subject_id=args["subject_id"], charttime__lt=context.cutoff)
    if args.get("hadm_id") is not None:
        qs = qs.filter(hadm_id=args["hadm_id"])
    return qs.order_by("-charttime", "-note_seq")


def _sections(note: m.DischargeNote | m.RadiologyNote, *, kind: str, keyword: str | None) -> list[Section]:
    """All sections; with ``keyword``: the sections it names, else those whose text contains it."""
    sections = split_sections(note.text, kind=_SPLIT_KIND[kind])
    if keyword is None:
        return sections
    named = [s for s in sections if matches_section(s, keyword)]
    if named:
        return named
    needle = keyword.strip().lower()
    return [s for s in sections if needle in s.text.lower() or needle in s.title.lower()]


def _section_json(sections: list[Section]) -> list[dict[str, str]]:
    return [{"title": s.title, "text": s.text} for s in sections]


def document_reference_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_scope(args=args, context=context)
    kinds = [args["type_code"]] if args["type_code"] else list(_NOTE_TYPES)
    found: list[tuple[Any, str, list[Section]]] = []
    for kind in kinds:
        for note in _notes(model=_NOTE_TYPES[kind][0], args=args, context=context):
            sections = _sections(note, kind=kind, keyword=args["keyword"])
            if sections:  # a keyword drops notes that have nothing of it
                found.append((note, kind, sections))
    found.sort(key=lambda item: item[0].charttime, reverse=True)
    out = []
    for note, kind, sections in found[:NOTE_COUNT]:
        _, loinc, display = _NOTE_TYPES[kind]
        out.append(
            drop_none(
                {
                    "resourceType": "DocumentReference",
                    "id": f"note-{note.note_id}",
                    "status": "current",
                    "type": {"coding": [{"system": _LOINC, "code": loinc, "display": display}], "text": display},
                    "subject": ref("Patient", note.subject_id),
                    "date": fmt_datetime(note.charttime),
                    "context": {"encounter": [ref("Encounter", note.hadm_id)]} if note.hadm_id is not None else None,
                    "content": [{"attachment": {"contentType": "text/plain", "title": display}}],
                    "section": _section_json(sections),
                }
            )
        )
    return bundle(out, total=len(found))


def diagnostic_report_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Radiology reports; ``report_type`` matches the examination name or any text of the report."""
    check_scope(args=args, context=context)
    qs = _notes(model=m.RadiologyNote, args=args, context=context)
    if args["report_type"] is not None:
        qs = qs.filter(text__icontains=args["report_type"].strip())
    found = [(note, split_sections(note.text, kind="radiology")) for note in qs[:REPORT_COUNT]]
    total = qs.count() if len(found) == REPORT_COUNT else len(found)
    out = []
    for note, sections in found:
        exam = next((s.text.splitlines()[0] for s in sections if s.key in ("examination", "exam") and s.text), None)
        impression = next((s.text for s in sections if s.key == "impression"), None)
        out.append(
            drop_none(
                {
                    "resourceType": "DiagnosticReport",
                    "id": f"rad-{note.note_id}",
                    "status": "final",
                    "category": [
                        {
                            "coding": [
                                {
                                    "system": "http://terminology.hl7.org/CodeSystem/v2-0074",
                                    "code": "RAD",
                                    "display": "Radiology",
                                }
                            ]
                        }
                    ],
                    "code": {"text": exam or "Radiology report"},
                    "subject": ref("Patient", note.subject_id),
                    "encounter": ref("Encounter", note.hadm_id) if note.hadm_id is not None else None,
                    "effectiveDateTime": fmt_datetime(note.charttime),
                    "conclusion": impression,
                    "section": _section_json(sections),
                }
            )
        )
    return bundle(out, total=total)


def _activities(text: str) -> list[dict[str, Any]]:
    """One activity per non-empty line or bullet of the follow-up section."""
    items = []
    for line in text.splitlines():
        line = line.strip(" -*•\t")
        if line and line != "___":
            items.append({"detail": {"status": "scheduled", "description": line}})
    return items


# CarePlan categories → the discharge-note sections they are read from (keys of ehr.fhir.notes).
_PLAN_PARTS = {
    "discharge-planning": ("dischargeinstructions", "dischargedisposition", "dischargecondition"),
    "followup": ("followupinstructions",),
    "treatment": ("dischargemedications",),
}
_DEFAULT_PLAN = ("discharge-planning", "followup")


def care_plan_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_scope(args=args, context=context)
    parts = (args["category"],) if args["category"] else _DEFAULT_PLAN
    wanted = {key for part in parts for key in _PLAN_PARTS[part]}
    out = []
    for note in _notes(model=m.DischargeNote, args=args, context=context):
        sections = {s.key: s for s in split_sections(note.text, kind="discharge") if s.key in wanted and s.text}
        if not sections:
            continue
        instructions = sections.get("dischargeinstructions")
        activities = [
            item
            for key in ("followupinstructions", "dischargemedications")
            if key in sections
            for item in _activities(sections[key].text)
        ]
        notes = [
            {"text": f"{s.title}: {s.text}"}
            for key in ("dischargedisposition", "dischargecondition")
            if (s := sections.get(key))
        ]
        out.append(
            drop_none(
                {
                    "resourceType": "CarePlan",
                    "id": f"careplan-{note.note_id}",
                    # the release says completed for every care plan (semantics file §1)
                    "status": "completed" if context.bounds == "release" else "active",
                    "intent": "plan",
                    "category": [{"text": part} for part in parts],
                    "title": "Discharge plan",
                    "description": instructions.text if instructions else None,
                    "subject": ref("Patient", note.subject_id),
                    "encounter": ref("Encounter", note.hadm_id) if note.hadm_id is not None else None,
                    "created": fmt_datetime(note.charttime),
                    "activity": activities,
                    "note": notes,
                    "supportingInfo": [ref("DocumentReference", f"note-{note.note_id}")],
                }
            )
        )
    return bundle(out[:NOTE_COUNT], total=len(out))


def _allergens(text: str) -> list[str]:
    """MIMIC lists allergens separated by " / " or line breaks."""
    parts = re.split(r"\s+/\s+|\n", text)
    return [p.strip(" .,;") for p in parts if p.strip(" .,;") and p.strip() != "___"]


def allergy_intolerance_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Allergies from the discharge notes' ``Allergies:`` sections; newest note wins per substance."""
    check_scope(args=args, context=context)
    seen: dict[str, dict[str, Any]] = {}
    for note in _notes(model=m.DischargeNote, args=args, context=context):
        section = next((s for s in split_sections(note.text, kind="discharge") if s.key == "allergies"), None)
        if section is None or not section.text:
            continue
        nka_note = bool(_NO_KNOWN_ALLERGY.search(section.text))
        substances = ["No known allergies"] if nka_note else _allergens(section.text)
        for n, substance in enumerate(substances, start=1):
            key = normalise(substance)
            if key in seen:
                continue
            nka = substance == "No known allergies"
            seen[key] = drop_none(
                {
                    "resourceType": "AllergyIntolerance",
                    "id": f"allergy-{note.note_id}-{n}",
                    "clinicalStatus": {"coding": [{"system": _ALLERGY_CLINICAL, "code": "active"}]},
                    "code": (
                        {
                            "coding": [
                                {"system": "http://snomed.info/sct", "code": "716186003", "display": "No known allergy"}
                            ],
                            "text": section.text,
                        }
                        if nka
                        else {"text": substance}
                    ),
                    "patient": ref("Patient", note.subject_id),
                    "encounter": ref("Encounter", note.hadm_id) if note.hadm_id is not None else None,
                    "recordedDate": fmt_datetime(note.charttime),
                }
            )
        if args.get("hadm_id") is None and seen:
            break  # the newest discharge note's list is the current one
    resources = list(seen.values())
    return bundle(resources, total=len(resources))
