"""What the results pages show, read from ``EvalRun.summary`` (= ``summary.json``) so page figures
and the file agree, plus turn-level queries for the drill-down.

Leaderboard cells are fractions 0–1 (``None`` when not computed); templates and exports format them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext_lazy as _

from annotations.models import Assignment
from annotations.roles import is_adjudicator
from evaluation.metrics import LOW_SCORED_SHARE
from evaluation.models import EvalRun, EvalStatus, TurnResult

LANGUAGES = ("en", "zh")
# The paper's per-language block: (key, header, path in summary["metrics"][lang]).
PAPER_COLUMNS = (
    ("L1", "L1", ("mRS", "L1")),
    ("L2", "L2", ("mRS", "L2")),
    ("L3", "L3", ("mRS", "L3")),
    ("T60", "@T60", ("pass_at_turn", "0.6")),
    ("S60", "@S60", ("pass_at_session", "0.6")),
    ("T75", "@T75", ("pass_at_turn", "0.75")),
    ("S75", "@S75", ("pass_at_session", "0.75")),
)
TEXT_COLUMNS = ("id", "model", "protocol", "snapshot", "language", "variant", "trials", "judge")
# Runs made before protocols existed ran PhysReview's own conditions.
DEFAULT_PROTOCOL = "physreview"
FAILURE_TAU = 0.6  # a "failure" in the drill-down: the turn does not pass at Pass@Turn(0.60)
TURN_FILTERS = ("failures", "safety", "replay_misses", "invalid_calls", "unknown_arguments")


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    numeric: bool = True
    percent: bool = True
    group: str = ""


def dig(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def max_k(metrics: dict[str, Any]) -> float | None:
    """pass^k at the largest k the run has (k = trials)."""
    values = metrics.get("pass_hat_k") or {}
    if not values:
        return None
    return values[max(values, key=int)]


def columns() -> list[Column]:
    cols = [
        Column("id", _("Run"), numeric=True, percent=False),
        Column("model", _("Model"), numeric=False, percent=False),
        Column("protocol", _("Protocol"), numeric=False, percent=False),
        Column("snapshot", _("Snapshot"), numeric=False, percent=False),
        Column("language", _("Language"), numeric=False, percent=False),
        Column("variant", _("Variant"), numeric=False, percent=False),
        Column("trials", _("Trials"), percent=False),
    ]
    for lang in LANGUAGES:
        cols += [Column(f"{lang}_{key}", header, group=lang.upper()) for key, header, _path in PAPER_COLUMNS]
    for lang in LANGUAGES:
        cols.append(Column(f"{lang}_passk", "pass^k", group=lang.upper()))
        cols.append(Column(f"{lang}_safety", _("Safety failures"), group=lang.upper()))
    cols += [Column("tokens", _("Tokens"), percent=False), Column("cost", _("Cost (USD)"), percent=False)]
    return cols


COLUMN_KEYS = frozenset(c.key for c in columns())


def run_protocol(*, manifest: dict[str, Any] | None) -> str:
    """The protocol a run was played under (``runeval --protocol``), from its manifest."""
    protocol = (manifest or {}).get("protocol")
    name = protocol.get("name") if isinstance(protocol, dict) else protocol
    return str(name) if name else DEFAULT_PROTOCOL


def protocol_settings(*, manifest: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The protocol's recorded settings as ``(name, value)`` pairs for display, name first."""
    protocol = (manifest or {}).get("protocol")
    if not isinstance(protocol, dict):
        return [("name", run_protocol(manifest=manifest))]
    return [(str(k), "—" if v is None else str(v)) for k, v in protocol.items()]


def group_by_protocol(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows grouped by protocol (groups in order of first appearance, rows keep their order within a
    group), each marked with ``protocol_group_start`` at the first row of a group: scores of different
    protocols are not comparable, so no ranking interleaves them."""
    order: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        order.setdefault(row["protocol"], []).append(row)
    out = []
    for group in order.values():
        out += [{**row, "protocol_group_start": i == 0} for i, row in enumerate(group)]
    return out


def protocols_of(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(row["protocol"] for row in rows))


def run_row(*, run: EvalRun) -> dict[str, Any]:
    """One leaderboard row of a run, every figure copied from its summary."""
    summary = run.summary or {}
    manifest = summary.get("manifest") or run.manifest or {}
    params = manifest.get("parameters") or {}
    metrics = summary.get("metrics") or {}
    usage = summary.get("usage") or {}
    row: dict[str, Any] = {
        "id": run.pk,
        "model": summary.get("model") or run.model,
        "protocol": run_protocol(manifest=manifest),
        "judge": summary.get("judge") or run.judge,
        "snapshot": summary.get("snapshot") or (manifest.get("dataset") or {}).get("label") or "",
        "language": "+".join(sorted(metrics)) or "+".join(params.get("languages") or []),
        "variant": "+".join(params.get("variants") or []),
        "trials": params.get("trials"),
        # A partial run's figures leave its pending turns out: the leaderboard marks it.
        "status": run.status,
        "pending_turns": (summary.get("pending") or {}).get("turns"),
    }
    # A run scored on less than half its items is marked (its figures cover few items; issue 33).
    shares = [m.get("scored_share") for m in metrics.values() if m.get("scored_share") is not None]
    row["scored_share"] = min(shares) if shares else None
    row["low_scored"] = row["scored_share"] is not None and row["scored_share"] < LOW_SCORED_SHARE
    for lang in LANGUAGES:
        m = metrics.get(lang) or {}
        for key, _header, path in PAPER_COLUMNS:
            row[f"{lang}_{key}"] = dig(m, path)
        row[f"{lang}_passk"] = max_k(m)
        row[f"{lang}_safety"] = m.get("safety_failure_rate")
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    row["tokens"] = None if prompt is None and completion is None else (prompt or 0) + (completion or 0)
    row["cost"] = usage.get("cost_usd")
    row["mrs_all"] = {lang: dig(metrics.get(lang), ("mRS", "all")) for lang in LANGUAGES}
    return row


def finished_runs() -> QuerySet[EvalRun]:
    return EvalRun.objects.filter(status=EvalStatus.FINISHED).only(
        "id", "model", "judge", "manifest", "summary", "status", "started_at"
    )


def listed_runs() -> QuerySet[EvalRun]:
    """The leaderboard's runs: finished ones and partial ones (shown as partial, with their pending turns)."""
    return EvalRun.objects.filter(status__in=(EvalStatus.FINISHED, EvalStatus.PARTIAL)).only(
        "id", "model", "judge", "manifest", "summary", "status", "started_at"
    )


def sort_rows(rows: list[dict[str, Any]], *, sort: str, direction: str) -> list[dict[str, Any]]:
    """Sort by a known column; missing values always last. Unknown columns raise ``ValueError``."""
    if sort not in COLUMN_KEYS:
        raise ValueError(f"unknown sort column {sort!r}")
    present = [r for r in rows if r.get(sort) is not None]
    missing = [r for r in rows if r.get(sort) is None]
    present.sort(key=lambda r: (r[sort], r["id"]) if not isinstance(r[sort], str) else (r[sort].lower(), r["id"]))
    if direction == "desc":
        present.reverse()
    return present + missing


def leaderboard(*, sort: str = "id", direction: str = "desc", run_ids: list[int] | None = None) -> list[dict]:
    runs = listed_runs()
    if run_ids is not None:
        runs = runs.filter(pk__in=run_ids)
    return group_by_protocol(sort_rows([run_row(run=r) for r in runs], sort=sort, direction=direction))


def get_runs(*, ids: list[int]) -> list[EvalRun]:
    """Runs by id, in the given order; ``LookupError`` names the unknown ids."""
    found = {r.pk: r for r in EvalRun.objects.filter(pk__in=ids)}
    unknown = [i for i in ids if i not in found]
    if unknown:
        raise LookupError(f"unknown run {'id' if len(unknown) == 1 else 'ids'}: {', '.join(map(str, unknown))}")
    return [found[i] for i in ids]


def _delta(a: Any, b: Any) -> float | None:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return round(b - a, 4)
    return None


def compare(*, a: EvalRun, b: EvalRun) -> dict[str, Any]:
    """Side-by-side figures (B − A): the paper's columns per language and every slice of the summaries."""
    row_a, row_b = run_row(run=a), run_row(run=b)
    headline = [
        {"key": c.key, "label": c.label, "group": c.group, "percent": c.percent, "a": row_a[c.key], "b": row_b[c.key]}
        for c in columns()
        if c.numeric and c.key not in ("id", "trials")
    ]
    for item in headline:
        item["delta"] = _delta(item["a"], item["b"])
    slices_a, slices_b = (a.summary or {}).get("slices") or {}, (b.summary or {}).get("slices") or {}
    slices = []
    for dim in sorted(set(slices_a) | set(slices_b)):
        values = sorted(set(slices_a.get(dim) or {}) | set(slices_b.get(dim) or {}))
        entries = []
        for value in values:
            ea, eb = (slices_a.get(dim) or {}).get(value) or {}, (slices_b.get(dim) or {}).get(value) or {}
            cells = []
            for metric, path in (
                (_("mean turn score"), ("mean_turn_score",)),
                ("@T60", ("pass_at_turn", "0.6")),
                ("@T75", ("pass_at_turn", "0.75")),
                ("mRS", ("mRS",)),
            ):
                va, vb = dig(ea, path), dig(eb, path)
                cells.append({"metric": metric, "a": va, "b": vb, "delta": _delta(va, vb)})
            entries.append({"value": value, "n_a": ea.get("n_turns"), "n_b": eb.get("n_turns"), "cells": cells})
        slices.append({"dimension": dim, "entries": entries})
    mismatch = row_a["protocol"] != row_b["protocol"]
    return {"a": row_a, "b": row_b, "headline": headline, "slices": slices, "protocol_mismatch": mismatch}


def visible_results(*, user: Any, results: QuerySet[TurnResult]) -> QuerySet[TurnResult]:
    """The turn results ``user`` may open: all for adjudicators and admins; for anyone else those of the
    sessions assigned to them (a drill-down shows the gold answer and the replayed patient's answers)."""
    if is_adjudicator(user):
        return results
    assigned = Assignment.objects.filter(reviewer_id=user.pk).values("session__session_id")
    return results.filter(session_id__in=assigned)


def _safety_failed(run: EvalRun) -> Q:
    """Results with a scored safety item that failed. JSON containment is PostgreSQL-only (SQLite
    answers NotSupportedError): there, the verdicts are walked with json_each."""
    if connection.vendor == "postgresql":
        return Q(verdicts__contains=[{"is_safety": True, "scored": True, "passed": False}])
    table = connection.ops.quote_name(TurnResult._meta.db_table)
    sql = (
        f"SELECT r.id FROM {table} r, json_each(r.verdicts) v WHERE r.run_id = %s"
        " AND json_extract(v.value, '$.is_safety') = 1 AND json_extract(v.value, '$.scored') = 1"
        " AND json_extract(v.value, '$.passed') = 0"
    )
    return Q(pk__in=RawSQL(sql, [run.pk]))  # noqa: S611 (no user input: the run id is a bound parameter)


def turn_results(*, run: EvalRun, filters: dict[str, str]) -> QuerySet[TurnResult]:
    """The run's turn results without their (large) trace, narrowed by the drill-down filters."""
    qs = TurnResult.objects.filter(run=run).defer("trace")
    show = filters.get("show", "")
    if show == "failures":
        qs = qs.filter(Q(score__lt=FAILURE_TAU) | ~Q(infra_error=""))
    elif show == "safety":
        qs = qs.filter(_safety_failed(run))
    elif show == "replay_misses":
        qs = qs.filter(trace__replay_misses__gt=0)
    elif show == "invalid_calls":
        qs = qs.filter(trace__invalid_calls__gt=0)
    elif show == "unknown_arguments":
        qs = qs.filter(trace__unknown_arguments__gt=0)
    if filters.get("language"):
        qs = qs.filter(language=filters["language"])
    if filters.get("scenario"):
        qs = qs.filter(scenario=filters["scenario"])
    return qs


def scenarios_of(*, run: EvalRun) -> list[str]:
    slices = ((run.summary or {}).get("slices") or {}).get("scenario") or {}
    return sorted(slices)
