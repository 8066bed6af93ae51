"""Who sees what, mirroring the review UI: reviewers see only the sessions assigned to them,
adjudicators and admins see everything. Objects outside a user's view answer 404 (as in the UI);
actions the services refuse on a visible object answer 403."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from rest_framework.permissions import BasePermission

from annotations.models import Assignment
from annotations.roles import is_adjudicator
from scenarios.models import Session, Turn


def visible_sessions(*, user: Any) -> QuerySet[Session]:
    sessions = Session.objects.all()
    if not is_adjudicator(user):
        sessions = sessions.filter(Exists(Assignment.objects.filter(session=OuterRef("pk"), reviewer_id=user.pk)))
    return sessions


def visible_turns(*, user: Any) -> QuerySet[Turn]:
    turns = Turn.objects.all()
    if not is_adjudicator(user):
        turns = turns.filter(Exists(Assignment.objects.filter(session=OuterRef("session"), reviewer_id=user.pk)))
    return turns


class IsAdjudicatorOrAdmin(BasePermission):
    """Adjudicators and admins (``annotations.roles.is_adjudicator``)."""

    message = "Only adjudicators and admins may do this."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and is_adjudicator(request.user))
