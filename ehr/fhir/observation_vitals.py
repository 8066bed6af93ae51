"""Observation.search over vital signs: ICU chartevents and outpatient measurements (omr), merged newest first."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ehr import models as m
from ehr.fhir import codes
from ehr.fhir.common import (
    quantity,
    ref,
)
from ehr.fhir.context import ToolContext, date_window, fmt_date, time_window
from ehr.fhir.observation_common import CATEGORIES, item_observation, newest, unknown_code
from ehr.fhir.sql import db_date, db_datetime, fetch_all, fits_integer

_NO_BOUND = dt.datetime(9999, 12, 31, tzinfo=dt.UTC)


_VITAL_SELECT = """
SELECT c.subject_id, c.hadm_id, c.itemid, c.charttime, c.value, c.valuenum, c.valueuom,
       (SELECT d.label FROM {items} d WHERE d.itemid = c.itemid LIMIT 1),
       (SELECT d.lownormalvalue FROM {items} d WHERE d.itemid = c.itemid LIMIT 1),
       (SELECT d.highnormalvalue FROM {items} d WHERE d.itemid = c.itemid LIMIT 1),
       COUNT(*) OVER ()
FROM {chart} c
WHERE c.charttime < %s AND c.itemid IN ({itemids}) AND c.subject_id = %s"""
# Every vital sign (no code): the d_items rows that count as vitals, as a subquery like the ORM query had.
_VITAL_ITEMS = "SELECT v.itemid FROM {items} v WHERE (v.itemid IN ({ids}) OR v.category IN ({categories}))"


def _vital_resources(
    *, args: dict[str, Any], context: ToolContext, itemids: list[int] | None
) -> tuple[list[dict[str, Any]], int]:
    """ICU chart rows for ``itemids`` (``None``: every vital sign), written as SQL like the lab query."""
    if not fits_integer(args["subject_id"], args["hadm_id"]):
        return [], 0  # no such row (the ORM did not even query)
    start, end = time_window(context=context, date_from=args["date_from"], date_to=args["date_to"])
    # The release reads ICU vitals of every stay with neither its date bounds nor hadm_id (semantics file §1):
    # under release bounds the same rows, after the current date too; strict keeps the cutoff.
    release = context.bounds == "release"
    if release:
        start, end = None, _NO_BOUND
    items = m.DItem._meta.db_table
    if itemids is None:
        ids, categories = sorted(codes.VITAL_ITEMIDS), codes.VITAL_CATEGORIES
        placeholders = _VITAL_ITEMS.format(
            items=items, ids=", ".join(["%s"] * len(ids)), categories=", ".join(["%s"] * len(categories))
        )
        item_params: list[Any] = [*ids, *categories]
    else:
        placeholders, item_params = ", ".join(["%s"] * len(itemids)), list(itemids)
    sql = _VITAL_SELECT.format(items=items, chart=m.ChartEvent._meta.db_table, itemids=placeholders)
    params: list[Any] = [db_datetime(end), *item_params, args["subject_id"]]
    if args["hadm_id"] is not None and not release:
        sql += " AND c.hadm_id = %s"
        params.append(args["hadm_id"])
    if start is not None:
        sql += " AND c.charttime >= %s"
        params.append(db_datetime(start))
    sql += " ORDER BY c.charttime DESC, c.itemid ASC LIMIT %s"
    params.append(args["_count"])
    rows = fetch_all(sql, params)
    out = []
    for subject_id, hadm_id, itemid, charttime, value, valuenum, unit, label, low, high, _ in rows:
        res = item_observation(
            # chartevents has no MIMIC row id; this id is stable across re-imports
            rid=f"chart-{subject_id}-{itemid}-{charttime:%Y%m%d%H%M%S}",
            category="vital-signs",
            item=(itemid, label),
            subject_id=subject_id,
            hadm_id=hadm_id,
            charttime=charttime,
            reading=(valuenum, value, unit),
        )
        if low is not None and high is not None:
            res["referenceRange"] = [{"low": quantity(low, unit), "high": quantity(high, unit)}]
        out.append(res)
    return out, (rows[0][-1] if rows else 0)


_OMR_SELECT = """
SELECT o.subject_id, o.chartdate, o.seq_num, o.result_name, o.result_value
FROM {omr} o WHERE o.chartdate <= %s AND o.subject_id = %s"""


def _omr_resources(*, args: dict[str, Any], context: ToolContext, names: list[str] | None) -> list[dict[str, Any]]:
    """Outpatient measurements (blood pressure, weight, BMI); they have no encounter."""
    if args["hadm_id"] is not None or not fits_integer(args["subject_id"]):
        return []
    sql = _OMR_SELECT.format(omr=m.Omr._meta.db_table)
    first, last = date_window(context=context, date_from=args["date_from"], date_to=args["date_to"])
    if args["date_to"] is not None and context.release_dates:
        last = min(last, args["date_to"] - dt.timedelta(days=1))  # the release's date_to excludes its day
    params: list[Any] = [db_date(last), args["subject_id"]]
    if first is not None:
        sql += " AND o.chartdate >= %s"
        params.append(db_date(first))
    if names is not None:
        sql += f" AND o.result_name IN ({', '.join(['%s'] * len(names))})"
        params += names
    sql += " ORDER BY o.chartdate DESC, o.seq_num ASC LIMIT %s"
    params.append(args["_count"])
    out = []
    for subject_id, chartdate, seq_num, result_name, result_value in fetch_all(sql, params):
        res: dict[str, Any] = {
            "resourceType": "Observation",
            "id": f"omr-{subject_id}-{chartdate:%Y%m%d}-{seq_num}-{_slug(result_name)}",
            "status": "final",
            "category": CATEGORIES["vital-signs"],
            "code": {
                "coding": [{"system": "mimic-iv/omr", "code": result_name, "display": result_name}],
                "text": result_name,
            },
            "subject": ref("Patient", subject_id),
            "effectiveDateTime": fmt_date(chartdate),
        }
        bp = result_value.split("/")
        if len(bp) == 2 and all(_is_number(p) for p in bp):
            res["component"] = [
                {"code": {"text": "Systolic blood pressure"}, "valueQuantity": quantity(float(bp[0]), "mm Hg")},
                {"code": {"text": "Diastolic blood pressure"}, "valueQuantity": quantity(float(bp[1]), "mm Hg")},
            ]
        elif _is_number(result_value):
            res["valueQuantity"] = quantity(float(result_value), _omr_unit(result_name))
        else:
            res["valueString"] = result_value
        out.append(res)
    return out


def _omr_names(code: str) -> list[str]:
    names = codes.omr_names()
    key = code.strip().lower()
    wanted = {n.lower() for n in codes.VITAL_ALIASES.get(key, ())}
    return sorted(n for n in names if n.lower() == key or n.lower() in wanted or key in n.lower())


def _omr_unit(name: str) -> str | None:
    if "(" in name and name.endswith(")"):
        return name.rsplit("(", 1)[1][:-1]
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def search_vitals(*, args: dict[str, Any], context: ToolContext, strict: bool) -> tuple[list[dict[str, Any]], int]:
    code = args["code"]
    if code is None:
        chart, total = _vital_resources(args=args, context=context, itemids=None)
        omr = _omr_resources(args=args, context=context, names=None)
    else:
        resolved = codes.resolve_vital(code)
        names = _omr_names(code)
        if not resolved.itemids and not names:
            if strict:
                raise unknown_code(code=code, category="vital-signs")
            return [], 0
        chart, total = (
            _vital_resources(args=args, context=context, itemids=list(resolved.itemids))
            if resolved.itemids
            else ([], 0)
        )
        omr = _omr_resources(args=args, context=context, names=names) if names else []
    if not omr:
        return chart, total
    return newest(chart + omr, count=args["_count"]), total + len(omr)
