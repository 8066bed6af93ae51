"""Helpers shared by the review views: object permissions and posted versions."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from annotations.models import Assignment
from annotations.roles import is_adjudicator
from scenarios.models import Turn


def visible_turns(user: Any):
    """Turns the user may open: of sessions assigned to them, or all for adjudicators and admins.

    A subquery rather than a join on assignments: no duplicate rows, so callers need no DISTINCT
    (which made PostgreSQL compare every selected column, big JSON ones included).
    """
    turns = Turn.objects.all()
    if not is_adjudicator(user):
        turns = turns.filter(session_id__in=Assignment.objects.filter(reviewer_id=user.pk).values("session_id"))
    return turns


# JSON columns only the editing services (gates, re-executed calls) read: screens that show a turn's
# texts, comments or leases leave them in the database (~50 kB per session to decode otherwise).
SESSION_JSON = tuple(
    f"session__{name}"
    for name in (
        "tools",
        "tools_zh",
        "session_plan",
        "dep_graph",
        "patient_memory",
        "gate_report",
        "extra",
        "import_meta",
    )
)
TURN_JSON = ("derivations", "gate_report", "extra")


def turn_for(request: HttpRequest, pk: int, *, light: bool = False) -> Turn:
    """The turn if the user may see it (assigned reviewer, adjudicator or admin), else 404.

    ``light``: without the JSON columns of the turn and its session that only the editing services read.
    """
    turns = visible_turns(request.user).select_related("session")
    if light:
        turns = turns.defer(*SESSION_JSON, *TURN_JSON)
    return get_object_or_404(turns, pk=pk)


def posted_version(request: HttpRequest, name: str = "base_version") -> int:
    try:
        return int(request.POST.get(name, ""))
    except ValueError:
        raise Http404(f"{name} missing") from None
