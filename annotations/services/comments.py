"""Comments on a turn: anyone who may see the turn may comment."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from annotations.models import Comment
from annotations.roles import is_adjudicator
from annotations.services.errors import PermissionDenied
from annotations.services.reviews import is_assigned
from scenarios.models import Turn


def add_comment(*, turn: Turn, author: Any, text: str) -> Comment:
    if not (is_adjudicator(author) or is_assigned(turn=turn, user=author)):
        raise PermissionDenied(_("Only this session's reviewers and the adjudicators may comment on this turn."))
    if not text.strip():
        raise ValueError(_("A comment needs some text."))
    return Comment.objects.create(turn=turn, author=author, text=text)
