"""Judge certification: TPR and TNR against physician grades with exact 95% intervals, and the rule.

Truth is the physician's grade, "met" (pass) is positive: TPR = judge pass among physician passes, TNR =
judge fail among physician fails. Units are the (verdict, grade) pairs of ``graded_data`` (an item two
physicians graded counts once per physician; "can't tell" and unscored verdicts are left out). A judge is
identified by its name and prompt hash (an LLM judge whose prompt changed is a new judge); the rules judge
and the rules judge on compiled items have no prompt hash.

Rule: certified when the Clopper–Pearson 95% lower bounds of TPR and TNR both reach the threshold
(``settings.JUDGE_CERTIFICATION_THRESHOLD``, default 0.80). A judge without a single physician pass or fail
has no TPR (or TNR) and is not certified.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotations.agreement import cohens_kappa
from evaluation.calibration.compiled import COMPILED_JUDGE
from evaluation.calibration.exact import clopper_pearson
from evaluation.calibration.selectors import Comparison, graded_data, prompt_hash_of
from evaluation.calibration.stats import physician_report
from evaluation.models import EvalRun, JudgeCertification

Identity = tuple[str, str]  # (judge name, prompt hash or "")


def identity_of_run(run: EvalRun) -> Identity:
    return run.judge, prompt_hash_of(run.manifest)


@dataclass(frozen=True)
class Confusion:
    """Counts with the physician as truth: tp = both pass, fn = physician pass / judge fail, and so on."""

    tp: int
    fn: int
    tn: int
    fp: int

    @classmethod
    def of(cls, pairs: list[tuple[bool, bool]]) -> Confusion:
        """``pairs``: ``(judge passed, physician passed)``."""
        tp = sum(1 for j, p in pairs if j and p)
        fn = sum(1 for j, p in pairs if not j and p)
        tn = sum(1 for j, p in pairs if not j and not p)
        fp = sum(1 for j, p in pairs if j and not p)
        return cls(tp, fn, tn, fp)

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        return self.tn + self.fp


def rate_with_interval(successes: int, trials: int) -> tuple[float | None, float | None, float | None]:
    if not trials:
        return None, None, None
    low, high = clopper_pearson(successes=successes, trials=trials)
    return successes / trials, low, high


def is_certified(*, tpr_low: float | None, tnr_low: float | None, threshold: float) -> bool:
    return tpr_low is not None and tnr_low is not None and tpr_low >= threshold and tnr_low >= threshold


def data_hash(pairs: list[list[Any]]) -> str:
    """SHA-256 of the sorted ``[cluster, grader, judge passed, physician passed]`` rows."""
    body = json.dumps(sorted(pairs), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def comparisons_by_identity(comparisons: list[Comparison]) -> dict[Identity, list[Comparison]]:
    run_hashes = {
        pk: prompt_hash_of(manifest)
        for pk, manifest in EvalRun.objects.filter(pk__in={c.run_id for c in comparisons}).values_list("pk", "manifest")
    }
    out: dict[Identity, list[Comparison]] = defaultdict(list)
    for c in comparisons:
        # The compiled rules judge is recomputed on the graded answer: its run's judge is somebody else's.
        prompt = "" if c.judge == COMPILED_JUDGE else run_hashes.get(c.run_id, "")
        out[(c.judge, prompt)].append(c)
    return dict(out)


def figures_of(
    *, judge: str, prompt_hash: str, comparisons: list[Comparison], threshold: float, physician_kappa: float | None
) -> JudgeCertification:
    """An unsaved certification of these comparisons."""
    rows = [[f"{c.turn_result_id}:{c.item}", c.grader, c.judge_passed, c.physician_passed] for c in comparisons]
    confusion = Confusion.of([(c.judge_passed, c.physician_passed) for c in comparisons])
    tpr, tpr_low, tpr_high = rate_with_interval(confusion.tp, confusion.positives)
    tnr, tnr_low, tnr_high = rate_with_interval(confusion.tn, confusion.negatives)
    kappa = cohens_kappa([c.judge_passed for c in comparisons], [c.physician_passed for c in comparisons])
    return JudgeCertification(
        judge=judge,
        prompt_hash=prompt_hash,
        threshold=threshold,
        certified=is_certified(tpr_low=tpr_low, tnr_low=tnr_low, threshold=threshold),
        n=len(comparisons),
        n_positive=confusion.positives,
        n_negative=confusion.negatives,
        tpr=tpr,
        tpr_low=tpr_low,
        tpr_high=tpr_high,
        tnr=tnr,
        tnr_low=tnr_low,
        tnr_high=tnr_high,
        kappa=None if kappa != kappa else kappa,  # NaN (one class only) stored as unknown
        physician_kappa=physician_kappa,
        data_count=len(rows),
        data_hash=data_hash(rows),
        pairs=[[r[0], r[2], r[3]] for r in sorted(rows)],
        computed_at=timezone.now(),
    )


def current_certifications() -> dict[Identity, JudgeCertification]:
    """The newest certification of every judge identity."""
    out: dict[Identity, JudgeCertification] = {}
    for cert in JudgeCertification.objects.order_by("judge", "prompt_hash", "-computed_at", "-pk"):
        out.setdefault((cert.judge, cert.prompt_hash), cert)
    return out


def current_certification(*, judge: str, prompt_hash: str) -> JudgeCertification | None:
    return (
        JudgeCertification.objects.filter(judge=judge, prompt_hash=prompt_hash).order_by("-computed_at", "-pk").first()
    )


def certify_judges(*, threshold: float | None = None, judge: str | None = None) -> list[JudgeCertification]:
    """Compute and store the certification of every judge with graded verdicts (or of ``judge``).

    A judge whose newest certification has the same data hash and threshold keeps it (no new row), so
    computing twice on unchanged grades changes nothing. ValueError for an unknown judge or threshold."""
    threshold = settings.JUDGE_CERTIFICATION_THRESHOLD if threshold is None else threshold
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
    comparisons, units = graded_data(judge=judge, by_prompt=True)
    ceiling = physician_report(units).overall.kappa if units else None
    ceiling = None if ceiling is None or ceiling != ceiling else ceiling
    out = []
    with transaction.atomic():
        for (name, prompt), rows in sorted(comparisons_by_identity(comparisons).items()):
            fresh = figures_of(
                judge=name, prompt_hash=prompt, comparisons=rows, threshold=threshold, physician_kappa=ceiling
            )
            latest = current_certification(judge=name, prompt_hash=prompt)
            if latest is not None and latest.data_hash == fresh.data_hash and latest.threshold == threshold:
                out.append(latest)
                continue
            fresh.save()
            out.append(fresh)
    return out


def run_time_record(*, judge: dict[str, Any]) -> dict[str, Any]:
    """``manifest["judge_certification"]`` of a run created now with this judge (its ``describe()``)."""
    name, prompt = str(judge.get("name") or ""), str(judge.get("prompt_hash") or "")
    cert = current_certification(judge=name, prompt_hash=prompt)
    if cert is None:
        return {"certified": False, "reason": "not calibrated", "judge": name, "prompt_hash": prompt}
    return {
        "certified": cert.certified,
        "judge": name,
        "prompt_hash": prompt,
        "certification_id": cert.pk,
        "threshold": cert.threshold,
        "tpr": cert.tpr,
        "tpr_low": cert.tpr_low,
        "tnr": cert.tnr,
        "tnr_low": cert.tnr_low,
        "n": cert.n,
        "data_hash": cert.data_hash,
        "computed_at": cert.computed_at.isoformat(),
    }
