"""Reads over stored gold audits (the review screen's warning, the dashboard's totals line)."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Q, Sum

from core.cache_generations import bump, generation
from scenarios.audit.report import COUNT_KEYS
from scenarios.models import GoldAudit

# The review screen shows a turn's audit at every visit; audits change only when `manage.py audit_gold`
# stores a run, which moves the audits' generation (services._store): a database counter in every key, so the
# command's change reaches every server process (issue 36, F10). The bound covers any other writer.
AUDIT_CACHE_SECONDS = 300
AUDIT_GENERATION = "gold-audit"


def audit_key(turn_id: int) -> str:
    """The cache key of a turn's latest audit (read ahead by the review screen)."""
    return f"gold-audit:{generation(AUDIT_GENERATION)}:{turn_id}"


def turn_audit(*, turn_id: int) -> GoldAudit | None:
    """The latest audit of a turn, or None if it was never audited (cached, None too; see :func:`forget_audits`)."""
    return cache.get_or_set(
        audit_key(turn_id), lambda: GoldAudit.objects.filter(turn_id=turn_id).first(), AUDIT_CACHE_SECONDS
    )


def forget_audits() -> None:
    """Forget every cached audit, in every process (call in the transaction that replaces audit rows)."""
    bump(AUDIT_GENERATION)


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
