"""``{% adjudication_reasons turns as rows %}``: the adjudication queue's turns with why each needs it."""

from __future__ import annotations

from collections.abc import Iterable

from django import template

from annotations.adjudication_queue import reasons
from scenarios.models import Turn

register = template.Library()


@register.simple_tag
def adjudication_reasons(turns: Iterable[Turn]) -> list[tuple[Turn, str]]:
    return reasons(turns=turns)
