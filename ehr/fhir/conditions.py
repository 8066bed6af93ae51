"""Condition.search (diagnoses_icd) and Procedure.search (procedures_icd)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from ehr import models as m
from ehr.fhir.common import (
    ICD_DX_SYSTEMS,
    ICD_PX_SYSTEMS,
    bundle,
    check_scope,
    drop_none,
    ref,
)
from ehr.fhir.context import ToolContext, date_window, fmt_date, fmt_datetime

# The released contract has no _count here; a record's whole coded history fits well within this.
CONDITION_COUNT = 50


def _code_filter(code: str, titles: type[m.DIcdDiagnosis] | type[m.DIcdProcedure]) -> Q:
    """An ICD code (dots optional, prefix match: "I50" finds I5023) or words of the title."""
    term = code.strip()
    bare = term.replace(".", "").upper()
    matching = titles.objects.filter(long_title__icontains=term).values_list("icd_code", "icd_version")[:500]
    q = Q(icd_code__startswith=bare)
    for icd_code, version in matching:
        q |= Q(icd_code=icd_code, icd_version=version)
    return q


def _titles(
    model: type[m.DIcdDiagnosis] | type[m.DIcdProcedure], pairs: set[tuple[str, int]]
) -> dict[tuple[str, int], str]:
    if not pairs:
        return {}
    q = Q()
    for code, version in pairs:
        q |= Q(icd_code=code, icd_version=version)
    return {(c, v): t for c, v, t in model.objects.filter(q).values_list("icd_code", "icd_version", "long_title")}


def _current_admission(*, subject_id: int, context: ToolContext) -> int | None:
    """The admission "now" is in: the newest one started before the current date."""
    return (
        m.Admission.objects.filter(subject_id=subject_id, admittime__lt=context.now)
        .order_by("-admittime", "-hadm_id")
        .values_list("hadm_id", flat=True)
        .first()
    )


def condition_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Diagnoses have no time of their own: they are visible with their admission (see context.py).

    MIMIC codes no clinical status; a diagnosis coded in the current admission reads as ``active``,
    one coded only in earlier admissions as ``resolved`` (``inactive`` asks for the same ones).
    """
    check_scope(args=args, context=context)
    adm_qs = m.Admission.objects.filter(subject_id=args["subject_id"], admittime__lt=context.cutoff)
    if args["hadm_id"] is not None:
        adm_qs = adm_qs.filter(hadm_id=args["hadm_id"])
    admissions = {a.hadm_id: a for a in adm_qs.only("hadm_id", "admittime", "dischtime")}
    current = _current_admission(subject_id=args["subject_id"], context=context)
    qs = m.DiagnosisIcd.objects.filter(subject_id=args["subject_id"], hadm_id__in=list(admissions))
    if args["code"] is not None:
        qs = qs.filter(_code_filter(args["code"], m.DIcdDiagnosis))
    wanted = args["clinical_status"]
    if wanted == "active":
        qs = qs.filter(hadm_id=current)
    elif wanted in ("resolved", "inactive"):
        qs = qs.exclude(hadm_id=current)
    rows = sorted(qs, key=lambda r: (-admissions[r.hadm_id].admittime.timestamp(), r.seq_num))
    total = len(rows)
    rows = rows[:CONDITION_COUNT]
    titles = _titles(m.DIcdDiagnosis, {(r.icd_code, r.icd_version) for r in rows})
    out = []
    for r in rows:
        adm = admissions[r.hadm_id]
        title = titles.get((r.icd_code, r.icd_version), r.icd_code)
        discharged = context.time_visible(adm.dischtime)
        status = "active" if r.hadm_id == current else "resolved"
        out.append(
            drop_none(
                {
                    "resourceType": "Condition",
                    "id": f"dx-{r.hadm_id}-{r.seq_num}",
                    "clinicalStatus": {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/condition-clinical",
                                "code": status,
                            }
                        ]
                    },
                    "category": [
                        {
                            "coding": [
                                {
                                    "system": "http://terminology.hl7.org/CodeSystem/condition-category",
                                    "code": "encounter-diagnosis",
                                    "display": "Encounter Diagnosis",
                                }
                            ]
                        }
                    ],
                    "code": {
                        "coding": [
                            {"system": ICD_DX_SYSTEMS.get(r.icd_version, "icd"), "code": r.icd_code, "display": title}
                        ],
                        "text": title,
                    },
                    "subject": ref("Patient", r.subject_id),
                    "encounter": ref("Encounter", r.hadm_id),
                    "recordedDate": fmt_datetime(adm.dischtime) if discharged else None,
                    # seq_num 1 is the principal diagnosis of the admission
                    "extension": [{"url": "mimic-iv/seq_num", "valueInteger": r.seq_num}],
                }
            )
        )
    return bundle(out, total=total)


def procedure_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_scope(args=args, context=context)
    _, last = date_window(context=context, date_from=None, date_to=None)
    qs = m.ProcedureIcd.objects.filter(subject_id=args["subject_id"], chartdate__lte=last)
    if args["hadm_id"] is not None:
        qs = qs.filter(hadm_id=args["hadm_id"])
    total = qs.count()
    rows = list(qs.order_by("-chartdate", "hadm_id", "seq_num")[:CONDITION_COUNT])
    titles = _titles(m.DIcdProcedure, {(r.icd_code, r.icd_version) for r in rows})
    out = []
    for r in rows:
        title = titles.get((r.icd_code, r.icd_version), r.icd_code)
        out.append(
            {
                "resourceType": "Procedure",
                "id": f"px-{r.hadm_id}-{r.seq_num}",
                "status": "completed",
                "code": {
                    "coding": [
                        {"system": ICD_PX_SYSTEMS.get(r.icd_version, "icd"), "code": r.icd_code, "display": title}
                    ],
                    "text": title,
                },
                "subject": ref("Patient", r.subject_id),
                "encounter": ref("Encounter", r.hadm_id),
                "performedDateTime": fmt_date(r.chartdate),
            }
        )
    return bundle(out, total=total)
