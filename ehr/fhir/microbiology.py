"""Observation.search, microbiology part (microbiologyevents): one Observation per specimen, test and
isolate, with the organism as the value and the susceptibilities as components. Results stored after
the session's current date show as "Pending"."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ehr import models as m
from ehr.fhir import codes
from ehr.fhir.common import ITEMID_SYSTEM, OBS_CATEGORY_SYSTEM, interpretation, ref
from ehr.fhir.context import ToolContext, fmt_datetime, time_window
from ehr.fhir.sql import db_datetime, fetch_all, fits_integer, icontains, parse_db_datetime

MICRO_CATEGORY_SYSTEM = "mimic-iv/observation-category"
_MICRO_ROW_CAP = 5000  # microbiology rows per search are grouped in Python; a patient has far fewer

MICRO_CATEGORY = [
    {"coding": [{"system": OBS_CATEGORY_SYSTEM, "code": "laboratory", "display": "Laboratory"}]},
    {"coding": [{"system": MICRO_CATEGORY_SYSTEM, "code": "microbiology", "display": "Microbiology"}]},
]


_MICRO_COLUMNS = [f.column for f in m.MicrobiologyEvent._meta.concrete_fields]
_MicroRow = namedtuple("_MicroRow", [f.attname for f in m.MicrobiologyEvent._meta.concrete_fields] + ["when", "stored"])
# The columns, order and cap of the former ORM query (same statement, so the same plan and tie order).
_MICRO_SELECT = f"""
SELECT {", ".join(f"e.{c}" for c in _MICRO_COLUMNS)},
       COALESCE(e.charttime, e.chartdate) AS "when", COALESCE(e.storetime, e.storedate) AS "stored"
FROM {m.MicrobiologyEvent._meta.db_table} e
WHERE e.subject_id = %s AND COALESCE(e.charttime, e.chartdate) < %s"""
_MICRO_ORDER = """
ORDER BY "when" DESC, e.micro_specimen_id ASC, e.test_seq ASC, e.isolate_num ASC, e.ab_name ASC LIMIT %s"""


def _micro_rows(*, args: dict[str, Any], context: ToolContext) -> list[_MicroRow]:
    """Written as SQL: compiling the ORM query cost ~2 ms of CPU per call, far more than running it."""
    if not fits_integer(args["subject_id"], args["hadm_id"]):
        return []  # no such row (the ORM did not even query)
    start, end = time_window(context=context, date_from=args["date_from"], date_to=args["date_to"])
    sql, params = _MICRO_SELECT, [args["subject_id"], db_datetime(end)]
    if start is not None:
        sql += " AND COALESCE(e.charttime, e.chartdate) >= %s"
        params.append(db_datetime(start))
    if args["hadm_id"] is not None:
        sql += " AND e.hadm_id = %s"
        params.append(args["hadm_id"])
    code = args["code"]
    if code is not None:
        numeric = codes.numeric_itemid(code)
        if numeric is not None:
            if not fits_integer(numeric):
                return []
            sql += " AND (e.test_itemid = %s OR e.spec_itemid = %s OR e.org_itemid = %s)"
            params += [numeric] * 3
        else:
            like, pattern = icontains(code.strip())
            columns = ("e.test_name", "e.spec_type_desc", "e.org_name")
            sql += f" AND ({' OR '.join(like.format(column=c) for c in columns)})"
            params += [pattern] * 3
    rows = fetch_all(sql + _MICRO_ORDER, [*params, _MICRO_ROW_CAP])
    return [_MicroRow(*r[:-2], parse_db_datetime(r[-2]), parse_db_datetime(r[-1])) for r in rows]


def search_micro(*, args: dict[str, Any], context: ToolContext) -> tuple[list[dict[str, Any]], int]:
    groups: dict[tuple, list[_MicroRow]] = {}
    for row in _micro_rows(args=args, context=context):
        groups.setdefault((row.micro_specimen_id, row.test_itemid, row.isolate_num or 0), []).append(row)
    resources = [_micro_resource(key, members, context) for key, members in groups.items()]
    return resources[: args["_count"]], len(resources)


def _micro_resource(key: tuple, rows: list[_MicroRow], context: ToolContext) -> dict[str, Any]:
    first = rows[0]
    known = [r for r in rows if r.stored is None or context.time_visible(r.stored)]
    res: dict[str, Any] = {
        "resourceType": "Observation",
        "id": f"micro-{key[0]}-{key[1]}-{key[2]}",
        "status": "final" if known else "preliminary",
        "category": MICRO_CATEGORY,
        "code": {
            "coding": [{"system": ITEMID_SYSTEM, "code": str(first.test_itemid), "display": first.test_name}],
            "text": first.test_name,
        },
        "subject": ref("Patient", first.subject_id),
    }
    if first.hadm_id is not None:
        res["encounter"] = ref("Encounter", first.hadm_id)
    res["effectiveDateTime"] = fmt_datetime(first.when)
    res["specimen"] = {"display": first.spec_type_desc, "identifier": {"value": str(first.micro_specimen_id)}}
    if not known:
        res["valueString"] = "Pending"
        return res
    org = next((r for r in known if r.org_name), None)
    if org is not None:
        res["valueCodeableConcept"] = {
            "coding": [{"system": ITEMID_SYSTEM, "code": str(org.org_itemid), "display": org.org_name}],
            "text": org.org_name,
        }
    else:
        res["valueString"] = next((r.comments for r in known if r.comments), None) or "No organism reported"
    components = []
    for r in known:
        if not r.ab_name:
            continue
        comp: dict[str, Any] = {"code": {"text": r.ab_name}}
        if r.ab_itemid is not None:
            comp["code"]["coding"] = [{"system": ITEMID_SYSTEM, "code": str(r.ab_itemid), "display": r.ab_name}]
        if r.dilution_text:
            comp["valueString"] = r.dilution_text
        if r.interpretation in ("S", "R", "I"):
            comp["interpretation"] = interpretation(r.interpretation)
        elif r.interpretation:
            comp["interpretation"] = [{"text": r.interpretation}]
        components.append(comp)
    if components:
        res["component"] = components
    notes = [n for n in {r.quantity for r in known if r.quantity} | ({org.comments} if org and org.comments else set())]
    if notes:
        res["note"] = [{"text": n} for n in sorted(notes)]
    return res
