"""Judge calibration screens: samples, the blind grading screen (HTMX) and the agreement page.

Grade posts answer 200 with the re-rendered item and a banner, errors included (htmx 2 does not swap
4xx responses). Anyone signed in (reviewers, adjudicators, admins) grades; drawing a sample is for
adjudicators and admins.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotations.roles import is_adjudicator
from evaluation.calibration import presentation, selectors, services, stats
from evaluation.calibration.certification import current_certifications
from evaluation.models import CalibrationSample, EvalRun, GradeLabel, TurnResult
from evaluation.results.charts import interval_chart


def _index(request: HttpRequest, *, error: str = "", message: str = "", status: int = 200) -> HttpResponse:
    context = {
        "samples": selectors.samples_with_progress(grader=request.user),
        "can_draw": is_adjudicator(request.user),
        "runs": EvalRun.objects.only("pk", "model", "judge", "started_at", "rejudge_of_id")[:200],
        "error": error,
        "message": message,
        "form": request.POST if request.method == "POST" else {},
    }
    return render(request, "evaluation/calibration/index.html", context, status=status)


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return _index(request)


def _int(value: str | None, name: str) -> int:
    try:
        return int(value or "")
    except ValueError:
        raise services.CalibrationError(_("%(name)s must be a whole number") % {"name": name}) from None


@login_required
@require_POST
def draw(request: HttpRequest) -> HttpResponse:
    if not is_adjudicator(request.user):
        raise PermissionDenied
    try:
        sample = services.draw_sample(
            name=request.POST.get("name", ""),
            run_ids=[_int(v, _("run")) for v in request.POST.getlist("runs")],
            per_stratum=_int(request.POST.get("per_stratum"), _("items per stratum")),
            seed=_int(request.POST.get("seed") or "0", _("seed")),
            by=request.user,
        )
    except services.CalibrationError as exc:
        return _index(request, error=str(exc))
    return _index(
        request, message=_("Sample %(name)s: %(n)d items.") % {"name": sample.name, "n": sample.items.count()}
    )


@login_required
@require_GET
def next_item(request: HttpRequest, pk: int) -> HttpResponse:
    sample = get_object_or_404(CalibrationSample, pk=pk)
    result_id = selectors.next_turn_result_id(sample=sample, grader=request.user)
    if result_id is None:
        return _index(request, message=_("You have graded every item of sample %(name)s.") % {"name": sample.name})
    return redirect("evaluation:calibration_grade", pk=sample.pk, turn_result=result_id)


def _sampled(pk: int, turn_result: int) -> tuple[CalibrationSample, TurnResult]:
    sample = get_object_or_404(CalibrationSample, pk=pk)
    result = get_object_or_404(TurnResult.objects.filter(calibration_items__sample=sample).distinct(), pk=turn_result)
    return sample, result


@login_required
@require_GET
def grade(request: HttpRequest, pk: int, turn_result: int) -> HttpResponse:
    sample, result = _sampled(pk, turn_result)
    context = selectors.grading_screen(sample=sample, turn_result=result, grader=request.user)
    context.update(
        sample=sample,
        result=result,
        labels=GradeLabel.choices,
        next_url=reverse("evaluation:calibration_next", kwargs={"pk": sample.pk}),
    )
    return render(request, "evaluation/calibration/grade.html", context)


@login_required
@require_POST
def save(request: HttpRequest, pk: int, turn_result: int) -> HttpResponse:
    sample, result = _sampled(pk, turn_result)
    error = message = ""
    try:
        item = _int(request.POST.get("item"), _("item"))
        services.save_grade(
            sample=sample,
            turn_result=result,
            item=item,
            grader=request.user,
            label=request.POST.get("label", ""),
            note=request.POST.get("note", ""),
        )
        message = _("Saved.")
    except services.CalibrationError as exc:
        error = str(exc)
        item = None
    items = [item] if item is not None else []
    rows = selectors.grading_screen_rows(turn_result=result, items=items, grader=request.user)
    context = {
        "row": rows[0] if rows else None,
        "sample": sample,
        "result": result,
        "labels": GradeLabel.choices,
        "error": error,
        "message": message,
    }
    return render(request, "evaluation/calibration/_item.html", context)


@login_required
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    judge = request.GET.get("judge") or None
    run = request.GET.get("run") or None
    everyone = is_adjudicator(request.user)
    # Reviewers: figures over their own grades only, as blind as the grading screen (issue 36, F5).
    grader_id = None if everyone else request.user.pk
    error = ""
    try:
        run_id = _int(run, _("run")) if run else None
        report = stats.agreement_report(judge=judge, run_id=run_id, grader_id=grader_id)
    except ValueError as exc:
        error, report = str(exc), stats.agreement_report(grader_id=grader_id)
    context = {
        "everyone": everyone,
        "report": report,
        "rows": stats.table_rows(report),
        "paper": f"{100 * stats.PAPER_AGREEMENT:.2f}",
        "judges": selectors.known_judges(),
        "judge": judge or "",
        "run": run or "",
        "error": error,
        "reps": stats.BOOTSTRAP_REPS,
        "physician_pairs": stats.physician_pair_rows(report),
        "judge_pairs": stats.judge_pair_rows(report),
    }
    context.update(_certification_context())
    return render(request, "evaluation/calibration/agreement.html", context)


def _certification_context() -> dict:
    """The stored certifications (``manage.py certify_judges`` computes them): a table and TPR/TNR bars."""
    certs = sorted(current_certifications().values(), key=lambda c: (c.judge, c.prompt_hash))
    bars = []
    for c in certs:
        name = f"{c.judge} {c.prompt_hash[:8]}".strip()
        bars.append({"label": f"{name} · TPR", "value": c.tpr, "low": c.tpr_low, "high": c.tpr_high})
        bars.append({"label": f"{name} · TNR", "value": c.tnr, "low": c.tnr_low, "high": c.tnr_high})
    threshold = certs[0].threshold if certs else None
    # xgettext:no-python-format
    title = _("TPR and TNR against physicians, exact 95% intervals (dashed: certification threshold)")
    return {
        "certifications": [{"cert": c, "cells": presentation.cert_cells(c)} for c in certs],
        "certification_chart": interval_chart(title=title, bars=bars, threshold=threshold) if certs else None,
    }
