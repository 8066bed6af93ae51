"""Dashboard: progress and agreement (a thin view over selectors.status_counts and annotations.agreement)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from annotations import agreement, blind, selectors
from annotations.models import RejectReason, TurnState
from annotations.roles import is_adjudicator
from scenarios.models import Scenario

DASHBOARD_STATUSES = (
    (TurnState.DRAFT, _("Draft"), "#9aa4b2"),
    (TurnState.IN_REVIEW, _("In review"), "#3b82f6"),
    (TurnState.NEEDS_ADJUDICATION, _("Needs adjudication"), "#d4a72c"),
    (TurnState.APPROVED, _("Approved"), "#1a7f37"),
    (TurnState.REJECTED, _("Rejected"), "#c0392b"),
    (TurnState.NEEDS_CONFIRMATION, _("Needs confirmation"), "#8250df"),
)
CHART_BAR_WIDTH, CHART_LABEL_WIDTH, CHART_ROW_HEIGHT = 420, 170, 26


def _status_rows(counts: dict[Any, dict[str, int]], label=str) -> list[dict[str, Any]]:
    rows = []
    for group, by_status in counts.items():
        cells = [by_status.get(status, 0) for status, _label, _colour in DASHBOARD_STATUSES]
        rows.append({"group": group, "label": label(group), "cells": cells, "total": sum(cells)})
    return rows


def _status_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Geometry of a stacked horizontal bar chart (one bar per row), drawn as inline SVG."""
    biggest = max((row["total"] for row in rows), default=0) or 1
    bars = []
    for i, row in enumerate(rows):
        x, segments = CHART_LABEL_WIDTH, []
        for (status, label, colour), n in zip(DASHBOARD_STATUSES, row["cells"], strict=True):
            width = round(CHART_BAR_WIDTH * n / biggest, 1)
            if n:
                segments.append({"x": x, "width": width, "colour": colour, "status": status, "label": label, "n": n})
            x += width
        y = i * CHART_ROW_HEIGHT
        bars.append(
            {"label": row["label"], "y": y, "text_y": y + 17, "segments": segments, "total": row["total"], "end": x + 6}
        )
    return {
        "bars": bars,
        "width": CHART_LABEL_WIDTH + CHART_BAR_WIDTH + 60,
        "height": max(len(rows), 1) * CHART_ROW_HEIGHT,
        "legend": [(label, colour) for _status, label, colour in DASHBOARD_STATUSES],
    }


def _agreement_sections(user: Any, *, everyone: bool) -> list[dict[str, Any]]:
    stats = selectors.agreement_statistics(viewer=user)  # blind: only what ``user`` may see (issue 36)
    me = user.get_username()
    sections = []
    for key, title in (("decisions", _("Decisions (approve/reject)")), ("rubric", _("Rubric items (keep/drop)"))):
        mine = [p for p in stats[key]["pairs"] if everyone or me in (p.rater_a, p.rater_b)]
        pairs = []
        for i, p in enumerate(mine, start=1):
            a, b = p.rater_a, p.rater_b
            if not everyone:  # blind review: a reviewer's partners stay unnamed
                a, b = me, blind.partner_label(index=i, count=len(mine))
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "n": p.n,
                    "percent": agreement.format_statistic(p.percent, percent=True),
                    "kappa": agreement.format_statistic(p.kappa),
                }
            )
        alpha = agreement.format_statistic(stats[key]["alpha"]) if everyone else None
        sections.append({"key": key, "title": title, "units": stats[key]["units"], "pairs": pairs, "alpha": alpha})
    return sections


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Counts by status, rejections by reason and agreement; reviewers see only their own figures."""
    user = request.user
    everyone = is_adjudicator(user)
    by_reviewer = selectors.status_counts(by="session__assignments__reviewer__username")
    by_reviewer.pop(None, None)  # turns of sessions nobody is assigned to
    if not everyone:
        by_reviewer = {user.get_username(): by_reviewer.get(user.get_username(), {})}
    context: dict[str, Any] = {
        "everyone": everyone,
        "statuses": DASHBOARD_STATUSES,
        "my_queue": selectors.review_queue(user=user).count(),
        "by_reviewer": _status_rows(by_reviewer),
        "agreement": _agreement_sections(user, everyone=everyone),
    }
    if everyone:
        scenario_labels = dict(Scenario.choices)
        by_scenario = _status_rows(selectors.status_counts(by="session__scenario"), lambda s: scenario_labels.get(s, s))
        reasons = dict(RejectReason.choices)
        context.update(
            by_scenario=by_scenario,
            by_tier=_status_rows(selectors.status_counts(by="session__tier"), lambda tier: f"L{tier}"),
            rejected=[
                {"reason": reason, "label": reasons.get(reason, reason or "—"), "n": n}
                for reason, n in sorted(selectors.rejected_by_reason().items(), key=lambda kv: (-kv[1], kv[0]))
            ],
            chart=_status_chart(by_scenario),
            adjudication_queue=selectors.adjudication_queue().count(),
        )
    return render(request, "annotations/dashboard.html", context)
