"""Note-based tools: DocumentReference, DiagnosticReport (radiology), CarePlan and AllergyIntolerance.

Notes are visible from their charttime (see context.py). CarePlan and AllergyIntolerance are read
from discharge-note sections, the only place MIMIC-IV records them.
"""

from __future__ import annotations

import re
from typing import Any

from django.db.models import QuerySet

from ehr import models as m
from ehr.fhir.common import bundle, check_scope, check_window, drop_none, ref
from ehr.fhir.context import ToolContext, fmt_datetime, time_window
from ehr.fhir.notes import Section, matches_section, normalise, split_sections

_NOTE_TYPES = {
    "discharge": (m.DischargeNote, "18842-5", "Discharge summary"),
    "radiology": (m.RadiologyNote, "18748-4", "Diagnostic imaging study"),
}
_LOINC = "http://loinc.org"
_NO_KNOWN_ALLERGY = re.compile(r"no known (drug )?allergies|nkda|no allergies|nka\b", re.IGNORECASE)
_ALLERGY_CLINICAL = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"


def _notes(
    *, model: type[m.DischargeNote] | type[m.RadiologyNote], args: dict[str, Any], context: ToolContext
) -> QuerySet:
    start, end = time_window(context=context, date_from=args.get("date_from"), date_to=args.get("date_to"))
    qs = model.objects.filter(subject_id=args["patient"], charttime__lt=end)
    if start is not None:
        qs = qs.filter(charttime__gte=start)
    if args.get("encounter") is not None:
        qs = qs.filter(hadm_id=args["encounter"])
    return qs.order_by("-charttime", "-note_seq")


def _sections(note: m.DischargeNote | m.RadiologyNote, *, kind: str, section: str | None) -> list[Section]:
    sections = split_sections(note.text, kind=kind)
    if section is None:
        return sections
    return [s for s in sections if matches_section(s, section)]


def _section_json(sections: list[Section]) -> list[dict[str, str]]:
    return [{"title": s.title, "text": s.text} for s in sections]


def document_reference_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_window(args=args)
    check_scope(args=args, context=context)
    kinds = [args["type"]] if args["type"] else ["discharge", "radiology"]
    found: list[tuple[Any, str, list[Section]]] = []
    for kind in kinds:
        for note in _notes(model=_NOTE_TYPES[kind][0], args=args, context=context):
            sections = _sections(note, kind=kind, section=args["section"])
            if sections:  # a section filter drops notes that do not have it
                found.append((note, kind, sections))
    found.sort(key=lambda item: item[0].charttime, reverse=True)
    out = []
    for note, kind, sections in found[: args["_count"]]:
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
    """Radiology reports; ``code`` matches the examination name or any text of the report."""
    check_window(args=args)
    check_scope(args=args, context=context)
    qs = _notes(model=m.RadiologyNote, args=args, context=context)
    if args["code"] is not None:
        qs = qs.filter(text__icontains=args["code"].strip())
    found = []
    for note in qs:
        sections = split_sections(note.text, kind="radiology")
        chosen = [s for s in sections if matches_section(s, args["section"])] if args["section"] else sections
        if chosen:
            found.append((note, sections, chosen))
    out = []
    for note, sections, chosen in found[: args["_count"]]:
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
                    "section": _section_json(chosen),
                }
            )
        )
    return bundle(out, total=len(found))


def _activities(text: str) -> list[dict[str, Any]]:
    """One activity per non-empty line or bullet of the follow-up section."""
    items = []
    for line in text.splitlines():
        line = line.strip(" -*•\t")
        if line and line != "___":
            items.append({"detail": {"status": "scheduled", "description": line}})
    return items


def care_plan_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_scope(args=args, context=context)
    out = []
    for note in _notes(model=m.DischargeNote, args=args, context=context):
        sections = {s.key: s for s in split_sections(note.text, kind="discharge")}
        instructions = sections.get("dischargeinstructions")
        followup = sections.get("followupinstructions")
        if instructions is None and followup is None:
            continue
        notes = [
            {"text": f"{s.title}: {s.text}"}
            for key in ("dischargedisposition", "dischargecondition")
            if (s := sections.get(key)) and s.text
        ]
        out.append(
            drop_none(
                {
                    "resourceType": "CarePlan",
                    "id": f"careplan-{note.note_id}",
                    "status": "active",
                    "intent": "plan",
                    "title": "Discharge plan",
                    "description": instructions.text if instructions else None,
                    "subject": ref("Patient", note.subject_id),
                    "encounter": ref("Encounter", note.hadm_id) if note.hadm_id is not None else None,
                    "created": fmt_datetime(note.charttime),
                    "activity": _activities(followup.text) if followup else None,
                    "note": notes,
                    "supportingInfo": [ref("DocumentReference", f"note-{note.note_id}")],
                }
            )
        )
    total = len(out)
    return bundle(out[: args["_count"]], total=total)


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
        if args.get("encounter") is None and seen:
            break  # the newest discharge note's list is the current one
    resources = list(seen.values())
    return bundle(resources[: args["_count"]], total=len(resources))
