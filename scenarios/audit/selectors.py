"""Reads over stored gold audits (the review screen's warning, the dashboard's totals line)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Max, Q, Sum

from scenarios.audit.report import COUNT_KEYS
from scenarios.models import GoldAudit


def turn_audit(*, turn_id: int) -> GoldAudit | None:
    """The latest audit of a turn, or None if it was never audited."""
    return GoldAudit.objects.filter(turn_id=turn_id).first()


def audit_totals() -> dict[str, Any] | None:
    """Sums over every audited turn (one query); None when nothing was audited yet.

    Rows of different runs (and bounds) add up: each turn keeps only its latest audit.
    """
    sums = {k: Sum(f"n_{k}") for k in COUNT_KEYS}
    row = GoldAudit.objects.aggregate(
        turns=Count("pk"),
        sessions=Count("turn__session", distinct=True),
        turns_with_findings=Count(
            "pk", filter=Q(n_differs__gt=0) | Q(n_leaks__gt=0) | Q(n_untraced__gt=0) | Q(n_premises__gt=0)
        ),
        last_run=Max("ran_at"),
        **sums,
    )
    if not row["turns"]:
        return None
    totals = {k: (v or 0) if k != "last_run" else v for k, v in row.items()}
    totals["findings"] = totals["differs"] + totals["leaks"] + totals["untraced"] + totals["premises"]
    totals["reproduced_share"] = round(totals["reproduced"] / totals["calls"], 4) if totals["calls"] else None
    return totals
