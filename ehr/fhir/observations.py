"""Observation.search: labs (labevents), vital signs (chartevents + omr) and microbiology (its own module).

The lab path is the hot one (benchmarked in bench/tool_latency.py): one SQL round trip that
resolves an exact label inside the query, counts matches with a window function and fetches only
the columns it renders. Patient/encounter checks and fuzzy code resolution only run when that
query found nothing, to tell "no results" apart from "bad patient / encounter / code".
"""

from __future__ import annotations

import datetime as dt
import heapq
from typing import Any

from ehr import models as m
from ehr.fhir import codes
from ehr.fhir.common import (
    ITEMID_SYSTEM,
    OBS_CATEGORY_SYSTEM,
    bundle,
    check_scope,
    check_window,
    interpretation,
    quantity,
    ref,
)
from ehr.fhir.context import ToolContext, date_window, fmt_date, fmt_datetime, time_window
from ehr.fhir.errors import ToolError
from ehr.fhir.microbiology import search_micro
from ehr.fhir.sql import db_date, db_datetime, fetch_all, fits_integer

# Microbiology has its own (ehr.fhir.microbiology).
_CATEGORIES = {
    cat: [{"coding": [{"system": OBS_CATEGORY_SYSTEM, "code": cat, "display": disp}]}]
    for cat, disp in {"laboratory": "Laboratory", "vital-signs": "Vital Signs"}.items()
}


def _value(out: dict[str, Any], *, valuenum: float | None, value: str | None, unit: str | None) -> None:
    if valuenum is not None:
        out["valueQuantity"] = quantity(valuenum, unit)
    elif value not in (None, ""):
        out["valueString"] = value  # "<0.1", "NEG", "___": reported as written


# --- laboratory ----------------------------------------------------------------------------


class _Exact(str):
    """An exact lab label, resolved inside the lab query itself."""


_LAB_SELECT = """
SELECT l.labevent_id, l.subject_id, l.hadm_id, l.itemid, l.charttime, l.value, l.valuenum, l.valueuom,
       l.ref_range_lower, l.ref_range_upper, l.flag, l.comments, d.label, d.fluid, COUNT(*) OVER ()
FROM {labs} l {join} {items} d ON d.itemid = l.itemid
WHERE l.subject_id = %s AND l.charttime < %s"""
# Same label for several fluids ("Glucose"): blood unless no blood item has that label (see codes.prefer_blood).
_LAB_EXACT = """
  AND UPPER(d.label) = UPPER(CAST(%s AS TEXT))
  AND (UPPER(d.fluid) = 'BLOOD' OR NOT EXISTS (
       SELECT 1 FROM {items} b WHERE UPPER(b.label) = UPPER(CAST(%s AS TEXT)) AND UPPER(b.fluid) = 'BLOOD'))"""


def _item_observation(
    *,
    rid: str,
    category: str,
    item: tuple[int, str | None],
    subject_id: int,
    hadm_id: int | None,
    charttime: Any,
    reading: tuple[float | None, str | None, str | None],
) -> dict[str, Any]:
    """The part a lab and a vital-sign Observation share: identity, code, subject, time, value."""
    itemid, label = item
    label = label or str(itemid)
    out: dict[str, Any] = {
        "resourceType": "Observation",
        "id": rid,
        "status": "final",
        "category": _CATEGORIES[category],
        "code": {"coding": [{"system": ITEMID_SYSTEM, "code": str(itemid), "display": label}], "text": label},
        "subject": ref("Patient", subject_id),
    }
    if hadm_id is not None:
        out["encounter"] = ref("Encounter", hadm_id)
    out["effectiveDateTime"] = fmt_datetime(charttime)
    valuenum, value, unit = reading
    _value(out, valuenum=valuenum, value=value, unit=unit)
    return out


def _lab_query(*, args: dict[str, Any], context: ToolContext, itemids: list[int] | _Exact | None) -> tuple[str, list]:
    """The hot query, written as SQL: building it with the ORM cost more than running it (bench/tool_latency.py).

    ``itemids``: a list of itemids, an exact label, or ``None`` for every lab.
    """
    start, end = time_window(context=context, date_from=args["date_from"], date_to=args["date_to"])
    params: list[Any] = [args["subject_id"], db_datetime(end)]
    sql = _LAB_SELECT
    if args["hadm_id"] is not None:
        sql += " AND l.hadm_id = %s"
        params.append(args["hadm_id"])
    if start is not None:
        sql += " AND l.charttime >= %s"
        params.append(db_datetime(start))
    if isinstance(itemids, _Exact):
        sql += _LAB_EXACT
        params += [str(itemids), str(itemids)]
    elif itemids is not None:
        sql += f" AND l.itemid IN ({', '.join(['%s'] * len(itemids))})"
        params += itemids
    sql += " ORDER BY l.charttime DESC, l.labevent_id DESC LIMIT %s"
    params.append(args["_count"])
    tables = {"labs": m.LabEvent._meta.db_table, "items": m.DLabItem._meta.db_table}
    return sql.format(join="JOIN" if isinstance(itemids, _Exact) else "LEFT JOIN", **tables), params


# One statement answers both "which results" and, when there are none, "why": a one-row probe (does
# the patient exist, is the encounter theirs and started, is the code a known item) left-joined to the
# search. So "no results", "bad patient/encounter" and "needs fuzzy code matching" cost one round
# trip, like a hit; the probe is three index lookups.
_PROBED = """
SELECT h.*, p.* FROM (
  SELECT (SELECT COUNT(*) FROM {patients} WHERE subject_id = %s) AS patient_known,
         (SELECT COUNT(*) FROM {admissions} WHERE hadm_id = %s AND subject_id = %s AND admittime < %s) AS enc_known,
         (SELECT COUNT(*) FROM {items} WHERE {item}) AS item_known
) p LEFT JOIN ({query}) h ON 1 = 1
ORDER BY h.charttime DESC, h.labevent_id DESC"""


def _lab_rows_probed(
    *, args: dict[str, Any], context: ToolContext, code: str, numeric: int | None
) -> tuple[list[tuple], tuple[int, int, int] | None]:
    """Rows for an itemid or exact label, or (no rows, (patient?, encounter?, item?)) counts."""
    query, params = _lab_query(args=args, context=context, itemids=[numeric] if numeric is not None else _Exact(code))
    sql = _PROBED.format(
        query=query,
        patients=m.Patient._meta.db_table,
        admissions=m.Admission._meta.db_table,
        items=m.DLabItem._meta.db_table,
        item="itemid = %s" if numeric is not None else "UPPER(label) = UPPER(CAST(%s AS TEXT))",
    )
    probe = [args["subject_id"], args["hadm_id"], args["subject_id"], db_datetime(context.cutoff)]
    probe.append(numeric if numeric is not None else code)
    rows = fetch_all(sql, probe + params)
    if rows[0][0] is None:  # the probe row alone: nothing matched
        return [], rows[0][-3:]
    return [r[:-3] for r in rows], None


def _lab_resource(row: tuple) -> dict[str, Any]:
    (
        labevent_id,
        subject_id,
        hadm_id,
        itemid,
        charttime,
        value,
        valuenum,
        unit,
        low,
        high,
        flag,
        comments,
        label,
        fluid,
        _total,
    ) = row
    out = _item_observation(
        rid=f"lab-{labevent_id}",
        category="laboratory",
        item=(itemid, label),
        subject_id=subject_id,
        hadm_id=hadm_id,
        charttime=charttime,
        reading=(valuenum, value, unit),
    )
    if low is not None or high is not None:
        rng: dict[str, Any] = {}
        if low is not None:
            rng["low"] = quantity(low, unit)
        if high is not None:
            rng["high"] = quantity(high, unit)
        out["referenceRange"] = [rng]
    if flag:
        # MIMIC only says "abnormal"; the direction comes from the reference range when there is one.
        if valuenum is not None and high is not None and valuenum > high:
            out["interpretation"] = interpretation("H")
        elif valuenum is not None and low is not None and valuenum < low:
            out["interpretation"] = interpretation("L")
        else:
            out["interpretation"] = interpretation("A")
    elif valuenum is not None and low is not None and high is not None and low <= valuenum <= high:
        out["interpretation"] = interpretation("N")
    if fluid:
        out["specimen"] = {"display": fluid}
    if comments:
        out["note"] = [{"text": comments}]
    return out


def _run_labs(
    *, args: dict[str, Any], context: ToolContext, itemids: list[int] | _Exact | None
) -> tuple[list[dict[str, Any]], int]:
    rows = fetch_all(*_lab_query(args=args, context=context, itemids=itemids))
    return [_lab_resource(r) for r in rows], (rows[0][-1] if rows else 0)


def _search_labs(*, args: dict[str, Any], context: ToolContext, strict: bool) -> tuple[list[dict[str, Any]], int]:
    """Lab results; ``strict`` makes an unknown code an error (category given) instead of no match.

    An empty result always comes with the patient/encounter checked (a bad one raises).
    """
    code = args["code"]
    if code is None:
        found = _run_labs(args=args, context=context, itemids=None)
        if not found[0]:
            check_scope(args=args, context=context)
        return found
    numeric = codes.numeric_itemid(code)
    # Fast path: an itemid, or an exact label resolved inside the same query.
    rows, probe = _lab_rows_probed(args=args, context=context, code=code.strip(), numeric=numeric)
    if rows:
        return [_lab_resource(r) for r in rows], rows[0][-1]
    patient, encounter, known_item = probe
    if not patient or (args["hadm_id"] is not None and not encounter):
        check_scope(args=args, context=context)  # raises the readable error
    if known_item:
        return [], 0
    resolved = codes.resolve_lab(code)
    if not resolved.itemids:
        if strict:
            raise _unknown_code(code=code, category="laboratory")
        return [], 0
    return _run_labs(args=args, context=context, itemids=list(resolved.itemids))


def _unknown_code(*, code: str, category: str) -> ToolError:
    close = codes.suggestions(code)
    hint = "test_name_close" if close else "test_name"
    return ToolError.of("unknown_code", hint, category=category, code=repr(code), names=", ".join(close))


# --- vital signs (ICU chartevents + outpatient omr) ------------------------------------------
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
        res = _item_observation(
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
            "category": _CATEGORIES["vital-signs"],
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


def _search_vitals(*, args: dict[str, Any], context: ToolContext, strict: bool) -> tuple[list[dict[str, Any]], int]:
    code = args["code"]
    if code is None:
        chart, total = _vital_resources(args=args, context=context, itemids=None)
        omr = _omr_resources(args=args, context=context, names=None)
    else:
        resolved = codes.resolve_vital(code)
        names = _omr_names(code)
        if not resolved.itemids and not names:
            if strict:
                raise _unknown_code(code=code, category="vital-signs")
            return [], 0
        chart, total = (
            _vital_resources(args=args, context=context, itemids=list(resolved.itemids))
            if resolved.itemids
            else ([], 0)
        )
        omr = _omr_resources(args=args, context=context, names=names) if names else []
    if not omr:
        return chart, total
    return _newest(chart + omr, count=args["_count"]), total + len(omr)


# --- the tool --------------------------------------------------------------------------------


def _newest(resources: list[dict[str, Any]], *, count: int) -> list[dict[str, Any]]:
    # Full datetimes and OMR dates compare correctly as strings (both start YYYY-MM-DD).
    return heapq.nlargest(count, resources, key=lambda r: r.get("effectiveDateTime") or "")


def observation_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_window(args=args)
    category = args["category"]
    if category == "laboratory":
        found, total = _search_labs(args=args, context=context, strict=True)
    elif category == "vital-signs":
        found, total = _search_vitals(args=args, context=context, strict=True)
    elif category == "microbiology":
        found, total = search_micro(args=args, context=context)
    else:
        found, total = [], 0
        for search in (_search_labs, _search_vitals):
            part, n = search(args=args, context=context, strict=False)
            found, total = found + part, total + n
        part, n = search_micro(args=args, context=context)
        found, total = _newest(found + part, count=args["_count"]), total + n
    # Unknown patient/encounter is an error, not "no results". The lab search has checked the scope
    # already whenever it found nothing, so that is done for "laboratory" and for no category.
    if not found and category in ("vital-signs", "microbiology"):
        check_scope(args=args, context=context)
    if not found and category is None:
        code = args["code"]
        if code is not None and not (codes.resolve_lab(code).itemids or codes.resolve_vital(code).itemids):
            raise _unknown_code(code=code, category="laboratory, vital-signs or microbiology")
    return bundle(found, total=total)
