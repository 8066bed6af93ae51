"""History of a turn: every revision per field with its before/after diff."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotations import diffs, selectors
from annotations.models import TurnApproval
from annotations.views.common import turn_for


@login_required
def history(request: HttpRequest, pk: int) -> HttpResponse:
    """Every revision of the turn (conflicts included), grouped per field, each with its diff."""
    turn = turn_for(request, pk, light=True)
    fields: dict[str, list[dict[str, Any]]] = {}
    for revision in selectors.history(turn=turn):
        fields.setdefault(revision.field, []).append(
            {"revision": revision, "diff": diffs.diff_field(revision.field, revision.before, revision.after)}
        )
    # Who approved which version (issue 32): the curated set takes a turn only at an approved version.
    approvals = list(TurnApproval.objects.filter(turn=turn).order_by("version"))
    return render(request, "annotations/history.html", {"turn": turn, "fields": fields, "approvals": approvals})
