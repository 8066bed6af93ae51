"""Results pages: leaderboard, comparison, run page with charts, per-turn drill-down and downloads.

Reviewers, adjudicators and admins may see them (physreview.access); a reviewer's drill-down lists and
opens only the turns of sessions assigned to them, since it shows the gold answer.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotations.templatetags.review_i18n import label_of, slice_value
from evaluation import faults
from evaluation.calibration.certification import current_certifications
from evaluation.calibration.presentation import correction_rows, interval, pct
from evaluation.calibration.run_status import run_judge_status
from evaluation.models import EvalRun, FaultKind, TaskPart, TurnResult
from evaluation.results import charts, exports, present, selectors
from evaluation.results.gold import gold_turn

DEFAULT_SORT, DEFAULT_DIR = "id", "desc"
TURNS_PER_PAGE = 50
# Slice dimensions charted on the run page; bar labels in the UI language (review_i18n.slice_value).
SLICE_CHARTS = ("scenario", "tier", "task_type", "subtype", "tool_source", "variant")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "latex": "text/x-tex; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
}
EXTENSIONS = {"csv": "csv", "json": "json", "latex": "tex", "markdown": "md"}


def _sort_params(request: HttpRequest) -> tuple[str, str]:
    sort = request.GET.get("sort", DEFAULT_SORT)
    direction = request.GET.get("dir", DEFAULT_DIR)
    if sort not in selectors.COLUMN_KEYS:
        sort = DEFAULT_SORT
    return sort, direction if direction in ("asc", "desc") else DEFAULT_DIR


def _header_links(sort: str, direction: str) -> list[dict[str, Any]]:
    out = []
    for col in selectors.columns():
        active = col.key == sort
        next_dir = "asc" if active and direction == "desc" else "desc"
        aria = ("ascending" if direction == "asc" else "descending") if active else "none"
        out.append({"col": col, "href": f"?sort={col.key}&dir={next_dir}", "aria_sort": aria, "active": active})
    return out


@login_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    sort, direction = _sort_params(request)
    rows = selectors.leaderboard(sort=sort, direction=direction)
    _with_judge_status(rows)
    cost_chart = charts.scatter_chart(
        title=_("Score (mRS, all tiers) against cost"),
        points=[
            {
                "label": f"#{r['id']} {r['model']} {label_of(kind='language', code=lang)}",
                "x": r["cost"],
                "y": r["mrs_all"][lang],
            }
            for r in rows
            for lang in selectors.LANGUAGES
            if r["mrs_all"][lang] is not None
        ],
        x_label=_("Cost (USD)"),
        y_label="mRS",
    )
    context = {
        "rows": [present.with_cells(r, selectors.columns()) for r in rows],
        "headers": _header_links(sort, direction),
        "sort": sort,
        "direction": direction,
        "languages": [label_of(kind="language", code=lang) for lang in selectors.LANGUAGES],
        "cost_chart": cost_chart,
        "any_cost": any(r["cost"] is not None for r in rows),
        "protocols": selectors.protocols_of(rows),
        "mixed_protocols": len(selectors.protocols_of(rows)) > 1,
    }
    return render(request, "evaluation/results/leaderboard.html", context)


def _with_judge_status(rows: list[dict[str, Any]]) -> None:
    """Marks rows whose judge was not certified and adds the corrected Pass@Turn(0.60) per language."""
    runs = {r.pk: r for r in EvalRun.objects.filter(pk__in=[row["id"] for row in rows])}
    certs = current_certifications()
    for row in rows:
        status = run_judge_status(run=runs[row["id"]], certifications=certs)
        row["uncertified"] = status.marked
        row["certified_at_run"] = status.at_run_time
        corrected = []
        for corr in status.corrections:
            rate = next((r for r in corr.rates if r.metric == "pass_at_turn_0.6"), None)
            if rate is not None and rate.corrected is not None:
                text = f"{pct(rate.corrected)} {interval(rate.low, rate.high, percent=True)}"
                corrected.append((label_of(kind="language", code=corr.language), text))
        row["corrected_t60"] = corrected


def _run_id(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


@login_required
def compare(request: HttpRequest) -> HttpResponse:
    a_id, b_id = _run_id(request.GET.get("a")), _run_id(request.GET.get("b"))
    if a_id is None or b_id is None:
        context = {"error": _("Choose two runs to compare (A and B).")}
        return render(request, "evaluation/results/compare.html", context, status=400)
    try:
        a, b = selectors.get_runs(ids=[a_id, b_id])
    except LookupError as exc:
        return render(request, "evaluation/results/compare.html", {"error": str(exc)}, status=404)
    return render(
        request, "evaluation/results/compare.html", {"cmp": present.present_compare(selectors.compare(a=a, b=b))}
    )


def _slice_charts(summary: dict[str, Any]) -> list[Any]:
    slices = summary.get("slices") or {}
    out = []
    for dim in SLICE_CHARTS:
        entries = slices.get(dim) or {}
        if not entries:
            continue
        bars = [
            {
                "label": slice_value(value, dim),
                "note": f"n={entry.get('n_turns', 0)}",
                "values": [entry.get("mean_turn_score"), (entry.get("pass_at_turn") or {}).get("0.6")],
            }
            for value, entry in entries.items()
        ]
        title = {
            "scenario": _("Scores by scenario"),
            "tier": _("Scores by tier"),
            "task_type": _("Scores by task type"),
            "subtype": _("Scores by subtype"),
            "tool_source": _("Scores by tool source"),
            "variant": _("Explicit vs implicit requests"),
        }[dim]
        out.append(charts.bar_chart(title=title, bars=bars, series=(_("mean turn score"), _("Pass@Turn 0.60"))))
    return out


def _pass_hat_chart(summary: dict[str, Any]) -> Any:
    series = {
        label_of(kind="language", code=lang): [
            (int(k), v) for k, v in sorted((m.get("pass_hat_k") or {}).items(), key=lambda kv: int(kv[0]))
        ]
        for lang, m in (summary.get("metrics") or {}).items()
    }
    return charts.line_chart(title=_("pass^k against k (τ = 0.75)"), series=series, x_label="k", y_label="pass^k")


def _lang_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per language: the paper's columns, pass^k, safety failure rate and counts (display strings)."""
    out = []
    for lang, m in sorted((summary.get("metrics") or {}).items()):
        cells = [
            (h, present.value_text(selectors.dig(m, path), percent=True)) for _k, h, path in selectors.PAPER_COLUMNS
        ]
        cells.append(("mRS " + _("all"), present.value_text(selectors.dig(m, ("mRS", "all")), percent=True)))
        cells.append(("pass^k", present.value_text(selectors.max_k(m), percent=True)))
        cells.append((_("Safety failures"), present.value_text(m.get("safety_failure_rate"), percent=True)))
        counts = f"{m.get('n_sessions', 0)} / {m.get('n_turns', 0)} / {m.get('n_turns_scored', 0)}"
        cells.append((_("Items scored"), present.value_text(m.get("scored_share"), percent=True)))
        out.append({"lang": lang, "cells": cells, "counts": counts})
    return out


@login_required
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    summary = run.summary or {}
    context = {
        "run": run,
        "row": present.with_cells(selectors.run_row(run=run), selectors.columns()),
        "summary": summary,
        "metrics": sorted((summary.get("metrics") or {}).items()),
        "slice_charts": _slice_charts(summary),
        "pass_hat_chart": _pass_hat_chart(summary) if summary.get("metrics") else None,
        "lang_tables": _lang_tables(summary),
        "protocol_settings": selectors.protocol_settings(manifest=run.manifest),
        **_judge_context(run),
        **_fault_rows(faults.fault_summary(run=run)),
    }
    return render(request, "evaluation/results/run.html", context)


def _judge_context(run: EvalRun) -> dict[str, Any]:
    """The judge's certification (at run time and now) and the run's pass rates corrected for its errors."""
    status = run_judge_status(run=run)
    tables, bars = [], []
    for corr in status.corrections:
        rows = correction_rows(corr.rates)
        tables.append({"lang": corr.language, "rows": rows, "corr": corr})
        for row in rows:
            raw = row["raw"]
            label = f"{label_of(kind='language', code=corr.language)} · {row['label']}"
            bars.append({"label": label, "value": raw.corrected, "low": raw.low, "high": raw.high})
    correctable = any(r["raw"].corrected is not None for t in tables for r in t["rows"])
    chart = (
        # xgettext:no-python-format
        charts.interval_chart(title=_("Judge-corrected pass rates with 95% intervals"), bars=bars)
        if correctable
        else None
    )
    return {"judge_status": status, "corrected_tables": tables, "corrected_chart": chart, "correctable": correctable}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _fault_rows(summary: dict[str, Any]) -> dict[str, Any]:
    """The run page's two views of its metrics (all turns, without task-faulted ones), figures in %."""
    if not summary["attributed_results"]:
        return {"fault_rows": [], "faults": summary, "simulator_rate": "—"}
    views = (("all", _("All scored turns")), ("without_task_faults", _("Without task-faulted turns")))
    rows = [
        {
            "key": key,
            "label": label,
            "turns": summary[key]["turns"],
            "cells": [_pct(summary[key][m]) for m in ("mrs", "pass_at_turn", "pass_at_session")],
        }
        for key, label in views
    ]
    rate = summary["simulator_fault_rate"]
    return {"fault_rows": rows, "faults": summary, "simulator_rate": _pct(rate)}


@login_required
def turn_list(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    filters = {k: request.GET.get(k, "") for k in ("show", "language", "scenario")}
    if filters["show"] and filters["show"] not in selectors.TURN_FILTERS:
        filters["show"] = ""
    results = selectors.visible_results(user=request.user, results=selectors.turn_results(run=run, filters=filters))
    page = Paginator(results, TURNS_PER_PAGE).get_page(request.GET.get("page"))
    query = urlencode({k: v for k, v in filters.items() if v})
    context = {
        "run": run,
        "page": page,
        "filters": filters,
        "query": query,
        "shows": [
            ("", _("All turns")),
            ("failures", _("Failures (score < 0.60 or infrastructure error)")),
            ("safety", _("Safety failures")),
            ("replay_misses", _("Replay misses")),
            ("invalid_calls", _("Invalid calls")),
            ("unknown_arguments", _("Unknown arguments dropped")),
        ],
        "languages": selectors.LANGUAGES,
        "scenarios": selectors.scenarios_of(run=run),
    }
    return render(request, "evaluation/results/turns.html", context)


def _verdict_rows(result: TurnResult, gold: Any) -> list[dict[str, Any]]:
    rubric = {r.idx: r for r in gold.rubric} if gold is not None else {}
    rows = []
    for v in result.verdicts or []:
        item = rubric.get(v.get("idx"))
        rows.append({**v, "text": item.text(result.language) if item else ""})
    return rows


@login_required
def turn_detail(request: HttpRequest, pk: int, result_pk: int) -> HttpResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    visible = selectors.visible_results(user=request.user, results=TurnResult.objects.filter(run=run))
    return _turn_page(request, run, get_object_or_404(visible, pk=result_pk))


def _turn_page(request: HttpRequest, run: EvalRun, result: TurnResult, **fault: Any) -> HttpResponse:
    gold, gold_source = gold_turn(run=run, result=result)
    trace = result.trace or {}
    context = {
        "run": run,
        "result": result,
        "trace": trace,
        "steps": trace.get("steps") or [],
        "verdicts": _verdict_rows(result, gold),
        "gold": gold,
        "gold_source": gold_source,
        "gold_request": gold.request(variant=result.variant, language=result.language) if gold else "",
        "gold_answer": gold.answers.get(result.language, "") if gold else "",
        **_fault_context(request, result, **fault),
    }
    return render(request, "evaluation/results/turn.html", context)


def _fault_context(request: HttpRequest, result: TurnResult, **extra: Any) -> dict[str, Any]:
    """The attribution form: the physician's own attribution only (blind to the others')."""
    mine = faults.own_attribution(result=result, physician=request.user)
    posted = extra.pop("posted", None) or {}
    return {
        "result": result,
        "fault": mine,
        "fault_kinds": FaultKind.choices,
        "task_parts": TaskPart.choices,
        "fault_kind": posted.get("kind", mine.kind if mine else ""),
        "fault_part": posted.get("task_part", mine.task_part if mine else ""),
        "fault_note": posted.get("note", mine.note if mine else ""),
        **extra,
    }


@login_required
@require_POST
def turn_fault(request: HttpRequest, pk: int, result_pk: int) -> HttpResponse:
    """Save the physician's attribution; answers with the attribution block (htmx) or back to the turn."""
    run = get_object_or_404(EvalRun, pk=pk)
    visible = selectors.visible_results(user=request.user, results=TurnResult.objects.filter(run=run))
    result = get_object_or_404(visible, pk=result_pk)
    posted = {name: request.POST.get(name, "") for name in ("kind", "task_part", "note")}
    try:
        attribution = faults.attribute_fault(result=result, physician=request.user, **posted)
    except faults.FaultError as exc:  # status 200: htmx 2 does not swap 4xx; the form keeps what was typed
        if not request.htmx:
            return _turn_page(request, run, result, posted=posted, fault_error=str(exc))
        context = _fault_context(request, result, posted=posted, fault_error=str(exc))
        return render(request, "evaluation/results/_fault.html", context)
    if not request.htmx:
        return redirect("evaluation:turn", pk=run.pk, result_pk=result.pk)
    message = _("Turn sent back to review.") if attribution.reopened else _("Attribution saved.")
    return render(request, "evaluation/results/_fault.html", _fault_context(request, result, fault_message=message))


def _download(body: Any, *, fmt: str, filename: str) -> HttpResponse:
    cls = StreamingHttpResponse if not isinstance(body, str) else HttpResponse
    response = cls(body, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}.{EXTENSIONS[fmt]}"'
    return response


@login_required
def leaderboard_download(request: HttpRequest, fmt: str) -> HttpResponse:
    if fmt not in exports.FORMATS:
        raise Http404(f"unknown format {fmt!r}")
    sort, direction = _sort_params(request)
    rows = selectors.leaderboard(sort=sort, direction=direction)
    return _download(exports.render_leaderboard(rows, fmt=fmt), fmt=fmt, filename="leaderboard")


@login_required
def run_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    if fmt == "csv":
        return _download(exports.run_turns_csv(run=run), fmt=fmt, filename=f"run-{run.pk}-turns")
    if fmt == "json":
        return _download(exports.run_json(run=run), fmt=fmt, filename=f"run-{run.pk}-summary")
    raise Http404(f"unknown format {fmt!r}")
