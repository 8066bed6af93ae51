"""Observation.search over laboratory results (labevents), the hot path (benchmarked in bench/tool_latency.py): one
SQL round trip that resolves an exact label inside the query, counts matches with a window function and fetches only
the columns it renders; scope checks and fuzzy code resolution only when that query found nothing."""

from __future__ import annotations

from typing import Any

from ehr import models as m
from ehr.fhir import codes
from ehr.fhir.common import (
    check_scope,
    interpretation,
    quantity,
)
from ehr.fhir.context import ToolContext, time_window
from ehr.fhir.observation_common import item_observation, unknown_code
from ehr.fhir.sql import db_datetime, fetch_all


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
    out = item_observation(
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


def search_labs(*, args: dict[str, Any], context: ToolContext, strict: bool) -> tuple[list[dict[str, Any]], int]:
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
            raise unknown_code(code=code, category="laboratory")
        return [], 0
    return _run_labs(args=args, context=context, itemids=list(resolved.itemids))
