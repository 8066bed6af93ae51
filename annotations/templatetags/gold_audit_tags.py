"""The stored gold audit on the review screen and the dashboard (one query each, see scenarios.audit)."""

from __future__ import annotations

from typing import Any

from django import template

from scenarios.audit import selectors
from scenarios.models import GoldAudit, Turn

register = template.Library()


@register.simple_tag
def gold_audit_of(turn: Turn) -> GoldAudit | None:
    """The latest audit of ``turn`` (None if it was never audited)."""
    return selectors.turn_audit(turn_id=turn.pk)


@register.simple_tag
def gold_audit_totals() -> dict[str, Any] | None:
    return selectors.audit_totals()
