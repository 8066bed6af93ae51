"""Certification and corrected-rate figures as strings: the same cells on the pages and in ``certify_judges``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from evaluation.calibration.correction import CorrectedRate
from evaluation.models import JudgeCertification

CERT_HEADER = ["judge", "prompt hash", "n", "n+", "n-", "TPR [95% CI]", "TNR [95% CI]", "kappa", "certified", "data"]
CORRECTION_HEADER = ["metric", "observed %", "corrected %", "95% CI"]
METRIC_LABELS = {
    "item_pass_rate": _("Item pass rate"),
    "mean_turn_score": _("Mean turn score"),
    "pass_at_turn_0.6": _("Pass@Turn 0.60"),
    "pass_at_turn_0.75": _("Pass@Turn 0.75"),
}


def rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def interval(low: float | None, high: float | None, *, percent: bool = False) -> str:
    if low is None or high is None:
        return "—"
    if percent:
        return f"[{100 * low:.1f}, {100 * high:.1f}]"
    return f"[{low:.3f}, {high:.3f}]"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def cert_cells(cert: JudgeCertification) -> list[str]:
    return [
        cert.judge,
        cert.prompt_hash[:12] or "—",
        str(cert.n),
        str(cert.n_positive),
        str(cert.n_negative),
        f"{rate(cert.tpr)} {interval(cert.tpr_low, cert.tpr_high)}",
        f"{rate(cert.tnr)} {interval(cert.tnr_low, cert.tnr_high)}",
        rate(cert.kappa),
        "yes" if cert.certified else "no",
        f"{cert.data_count} / {cert.data_hash[:12]}",
    ]


def correction_cells(row: CorrectedRate) -> list[str]:
    return [row.metric, pct(row.observed), pct(row.corrected), interval(row.low, row.high, percent=True)]


def correction_rows(rates: list[CorrectedRate]) -> list[dict[str, Any]]:
    """Rows for templates (translated metric names)."""
    return [
        {
            "metric": row.metric,
            "label": METRIC_LABELS.get(row.metric, row.metric),
            "observed": pct(row.observed),
            "corrected": pct(row.corrected),
            "interval": interval(row.low, row.high, percent=True),
            "raw": row,
        }
        for row in rates
    ]
