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
    check_window,
    drop_none,
    ref,
)
from ehr.fhir.context import ToolContext, date_window, fmt_date, fmt_datetime, time_window


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


def condition_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Diagnoses have no time of their own: they are visible with their admission (see context.py)."""
    check_window(args=args)
    check_scope(args=args, context=context)
    start, end = time_window(context=context, date_from=args["date_from"], date_to=args["date_to"])
    adm_qs = m.Admission.objects.filter(subject_id=args["patient"], admittime__lt=end)
    if args["encounter"] is not None:
        adm_qs = adm_qs.filter(hadm_id=args["encounter"])
    if start is not None:
        adm_qs = adm_qs.exclude(dischtime__lt=start)
    admissions = {a.hadm_id: a for a in adm_qs.only("hadm_id", "admittime", "dischtime")}
    qs = m.DiagnosisIcd.objects.filter(subject_id=args["patient"], hadm_id__in=list(admissions))
    if args["code"] is not None:
        qs = qs.filter(_code_filter(args["code"], m.DIcdDiagnosis))
    rows = sorted(qs, key=lambda r: (-admissions[r.hadm_id].admittime.timestamp(), r.seq_num))
    total = len(rows)
    rows = rows[: args["_count"]]
    titles = _titles(m.DIcdDiagnosis, {(r.icd_code, r.icd_version) for r in rows})
    out = []
    for r in rows:
        adm = admissions[r.hadm_id]
        title = titles.get((r.icd_code, r.icd_version), r.icd_code)
        discharged = context.time_visible(adm.dischtime)
        out.append(
            drop_none(
                {
                    "resourceType": "Condition",
                    "id": f"dx-{r.hadm_id}-{r.seq_num}",
                    "clinicalStatus": {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/condition-clinical",
                                "code": "active",
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
    check_window(args=args)
    check_scope(args=args, context=context)
    first, last = date_window(context=context, date_from=args["date_from"], date_to=args["date_to"])
    qs = m.ProcedureIcd.objects.filter(subject_id=args["patient"], chartdate__lte=last)
    if first is not None:
        qs = qs.filter(chartdate__gte=first)
    if args["encounter"] is not None:
        qs = qs.filter(hadm_id=args["encounter"])
    if args["code"] is not None:
        qs = qs.filter(_code_filter(args["code"], m.DIcdProcedure))
    total = qs.count()
    rows = list(qs.order_by("-chartdate", "hadm_id", "seq_num")[: args["_count"]])
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
