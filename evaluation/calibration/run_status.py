"""A run's judge on the results pages: certified at run time or not, its current certification, and the
run's pass rates corrected with it (cached: the bootstrap runs once per run, certification and turn set)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from evaluation.calibration.certification import Identity, current_certifications, identity_of_run
from evaluation.calibration.correction import Correction, correct_run
from evaluation.models import EvalRun, JudgeCertification

CACHE_SECONDS = 24 * 3600


@dataclass
class RunJudgeStatus:
    identity: Identity
    at_run_time: bool | None  # None: the run predates judge certification
    record: dict[str, Any]
    current: JudgeCertification | None
    corrections: list[Correction] = field(default_factory=list)

    @property
    def marked(self) -> bool:
        """Shown as uncertified: not certified when it ran (or, for older runs, not certified now)."""
        if self.at_run_time is not None:
            return not self.at_run_time
        return not (self.current and self.current.certified)


def _corrections(run: EvalRun, cert: JudgeCertification) -> list[Correction]:
    shape = run.turn_results.aggregate(n=Count("pk"), last=Max("pk"))
    key = f"judge-correction:{run.pk}:{cert.pk}:{cert.data_hash[:16]}:{shape['n']}:{shape['last']}"
    found = cache.get(key)
    if found is None:
        found = correct_run(run=run, certification=cert)
        cache.set(key, found, CACHE_SECONDS)
    return found


def run_judge_status(
    *, run: EvalRun, certifications: dict[Identity, JudgeCertification] | None = None, corrections: bool = True
) -> RunJudgeStatus:
    certifications = current_certifications() if certifications is None else certifications
    identity = identity_of_run(run)
    current = certifications.get(identity)
    record = (run.manifest or {}).get("judge_certification") or {}
    status = RunJudgeStatus(identity, run.judge_certified, record, current)
    if corrections and current is not None:
        status.corrections = _corrections(run, current)
    return status
