"""Condition.search (diagnoses_icd) and Procedure.search (procedures_icd)."""

from __future__ import annotations

from typing import Any

from ehr import models as m
from ehr.fhir.common import ICD_DX_SYSTEMS, ICD_PX_SYSTEMS, bundle, drop_none, ref, scoped_rows
from ehr.fhir.context import ToolContext, date_window, fmt_date, fmt_datetime
from ehr.fhir.sql import db_date, db_datetime, icontains, parse_db_date, parse_db_datetime, startswith

# The released contract has no _count here; a record's whole coded history fits well within this.
CONDITION_COUNT = 50

# The patient's diagnoses first, their titles joined by key: a title filter then reads the patient's few titles, not
# the dictionary's 112k (issue 37). ``cur``: the admission "now" is in, the newest one started before the current date
# (the status). One statement with the scope probe, see common.scoped_rows.
_DX = """
SELECT d.hadm_id, d.seq_num, d.icd_code, d.icd_version, t.long_title, a.admittime, a.dischtime, cur.hadm_id,
       COUNT(*) OVER (), ROW_NUMBER() OVER (ORDER BY a.admittime DESC, a.hadm_id DESC, d.seq_num) AS rn
FROM {dx} d
JOIN {adm} a ON a.hadm_id = d.hadm_id
CROSS JOIN (SELECT (SELECT c.hadm_id FROM {adm} c WHERE c.subject_id = %s AND c.admittime < %s
                    ORDER BY c.admittime DESC, c.hadm_id DESC LIMIT 1) AS hadm_id) cur
LEFT JOIN {titles} t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version
WHERE d.subject_id = %s AND a.subject_id = %s AND a.admittime < %s"""
_PX = """
SELECT p.hadm_id, p.seq_num, p.icd_code, p.icd_version, p.chartdate, t.long_title,
       COUNT(*) OVER (), ROW_NUMBER() OVER (ORDER BY p.chartdate DESC, p.hadm_id, p.seq_num) AS rn
FROM {px} p LEFT JOIN {titles} t ON t.icd_code = p.icd_code AND t.icd_version = p.icd_version
WHERE p.subject_id = %s AND p.chartdate <= %s"""


def _code_filter(code: str) -> tuple[str, list[str]]:
    """An ICD code (dots optional, prefix match: "I50" finds I5023) or words of the title (``t``)."""
    term = code.strip()
    prefix, prefix_param = startswith(term.replace(".", "").upper())
    words, words_param = icontains(term)
    sql = f" AND ({prefix.format(column='d.icd_code')} OR {words.format(column='t.long_title')})"
    return sql, [prefix_param, words_param]


def condition_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """Diagnoses have no time of their own: they are visible with their admission (see context.py).

    MIMIC codes no clinical status; a diagnosis coded in the current admission reads as ``active``,
    one coded only in earlier admissions as ``resolved`` (``inactive`` asks for the same ones).
    """
    subject, cutoff = args["subject_id"], db_datetime(context.cutoff)
    sql = _DX.format(
        dx=m.DiagnosisIcd._meta.db_table, adm=m.Admission._meta.db_table, titles=m.DIcdDiagnosis._meta.db_table
    )
    params: list[Any] = [subject, db_datetime(context.now), subject, subject, cutoff]
    if args["hadm_id"] is not None:
        sql += " AND a.hadm_id = %s"
        params.append(args["hadm_id"])
    if args["code"] is not None:
        more, more_params = _code_filter(args["code"])
        sql += more
        params += more_params
    wanted = args["clinical_status"]
    if wanted == "active":
        sql += " AND d.hadm_id = cur.hadm_id"
    elif wanted in ("resolved", "inactive"):
        sql += " AND (cur.hadm_id IS NULL OR d.hadm_id <> cur.hadm_id)"
    rows = scoped_rows(query=f"{sql} ORDER BY rn LIMIT {CONDITION_COUNT}", params=params, args=args, context=context)
    out = []
    for hadm_id, seq_num, icd_code, icd_version, title, _admittime, dischtime, current, _total in rows:
        title = icd_code if title is None else title
        discharged = context.time_visible(parse_db_datetime(dischtime))
        status = "active" if hadm_id == current else "resolved"
        out.append(
            drop_none(
                {
                    "resourceType": "Condition",
                    "id": f"dx-{hadm_id}-{seq_num}",
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
                            {"system": ICD_DX_SYSTEMS.get(icd_version, "icd"), "code": icd_code, "display": title}
                        ],
                        "text": title,
                    },
                    "subject": ref("Patient", subject),
                    "encounter": ref("Encounter", hadm_id),
                    "recordedDate": fmt_datetime(parse_db_datetime(dischtime)) if discharged else None,
                    # seq_num 1 is the principal diagnosis of the admission
                    "extension": [{"url": "mimic-iv/seq_num", "valueInteger": seq_num}],
                }
            )
        )
    return bundle(out, total=rows[0][-1] if rows else 0)


def procedure_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    _, last = date_window(context=context, date_from=None, date_to=None)
    sql = _PX.format(px=m.ProcedureIcd._meta.db_table, titles=m.DIcdProcedure._meta.db_table)
    params: list[Any] = [args["subject_id"], db_date(last)]
    if args["hadm_id"] is not None:
        sql += " AND p.hadm_id = %s"
        params.append(args["hadm_id"])
    rows = scoped_rows(query=f"{sql} ORDER BY rn LIMIT {CONDITION_COUNT}", params=params, args=args, context=context)
    out = []
    for hadm_id, seq_num, icd_code, icd_version, chartdate, title, _total in rows:
        title = icd_code if title is None else title
        out.append(
            {
                "resourceType": "Procedure",
                "id": f"px-{hadm_id}-{seq_num}",
                "status": "completed",
                "code": {
                    "coding": [{"system": ICD_PX_SYSTEMS.get(icd_version, "icd"), "code": icd_code, "display": title}],
                    "text": title,
                },
                "subject": ref("Patient", args["subject_id"]),
                "encounter": ref("Encounter", hadm_id),
                "performedDateTime": fmt_date(parse_db_date(chartdate)),
            }
        )
    return bundle(out, total=rows[0][-1] if rows else 0)
