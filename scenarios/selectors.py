"""Reads over sessions (no writes here)."""

from collections.abc import Iterable

from django.db import connection
from django.db.models import F, Prefetch, QuerySet
from django.db.models.functions import Collate

from scenarios.models import GoldStep, RubricItem, Session, Turn


def sessions_for_export(
    *,
    scenarios: Iterable[str] | None = None,
    tiers: Iterable[int] | None = None,
    statuses: Iterable[str] | None = None,
) -> QuerySet[Session]:
    """Sessions matching every given filter (each a set of allowed values), in byte order of ``record_id``,
    with turns, gold steps and rubric items prefetched in their own order."""
    qs = Session.objects.all()
    if scenarios:
        qs = qs.filter(scenario__in=list(scenarios))
    if tiers:
        qs = qs.filter(tier__in=list(tiers))
    if statuses:
        qs = qs.filter(status__in=list(statuses))
    turns = Turn.objects.order_by("index").prefetch_related(
        Prefetch("steps", queryset=GoldStep.objects.order_by("idx")),
        Prefetch("rubric_items", queryset=RubricItem.objects.order_by("idx")),
    )
    return qs.order_by(_bytewise("record_id")).prefetch_related(Prefetch("turns", queryset=turns))


def _bytewise(field: str) -> F | Collate:
    # PostgreSQL sorts text by locale (en_US ignores '_' at first); exports must sort the same everywhere.
    return Collate(F(field), "C") if connection.vendor == "postgresql" else F(field)
