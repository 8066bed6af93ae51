"""Labels of stored codes in the UI language (the codes themselves stay as stored)."""

from __future__ import annotations

from django import template

from annotations.models import TurnState

register = template.Library()


@register.filter
def turn_status(value: str) -> str:
    """``needs_adjudication`` → "Needs adjudication" (or its translation); unknown codes as they are."""
    return TurnState.LABELS.get(value, value)
