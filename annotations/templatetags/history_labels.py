"""Readable forms of a revision on the history page: its kind as a label, flags as yes/no, machine
checks as sentences (review_i18n.check_sentence): never ``review_edit`` or ``false → true``."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotations.models import RevisionKind
from annotations.templatetags.review_i18n import EMPTY

register = template.Library()

# review_edit is any direct save on the review screen (adjudicators' and admins' too): no "reviewer" in it.
KINDS = {
    RevisionKind.REVIEW_EDIT: gettext_lazy("Edit"),
    RevisionKind.ADJUDICATION: gettext_lazy("Adjudication"),
    RevisionKind.MERGE: gettext_lazy("Merge"),
    RevisionKind.SYSTEM: gettext_lazy("System"),
    RevisionKind.CONFLICT: gettext_lazy("Conflicting save"),
    RevisionKind.REVERT: gettext_lazy("Revert"),
}


@register.filter
def revision_kind(value: str) -> str:
    """``review_edit`` → "Edit" (or its translation); unknown kinds as they are."""
    return str(KINDS.get(value, value))


@register.filter
def value_kind(field: str) -> str:
    """How the history shows a flattened field's values: ``status``, ``flag``, ``check`` or ``text`` (a diff)."""
    if field == "status":
        return "status"
    if field.endswith(".is_safety"):
        return "flag"
    if field.endswith(".machine_check"):
        return "check"
    return "text"


@register.filter
def yes_no(value: Any) -> str:
    """A stored flag as "yes"/"no"; missing (the item did not exist yet) as "—"."""
    if value is None:
        return EMPTY
    return _("yes") if value else _("no")
