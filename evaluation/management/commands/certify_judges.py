"""Certify judges against physician grades and print run pass rates corrected for each judge's errors.

The figures are those of /results/calibration/agreement/ and of the run pages (same service, same seed).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from evaluation.calibration import certification, presentation
from evaluation.calibration.run_status import run_judge_status
from evaluation.models import EvalRun


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows)


class Command(BaseCommand):
    help = (
        "Compute each judge's TPR/TNR against physician grades (exact 95% intervals), store its certification "
        "(both lower bounds ≥ threshold) and print Rogan–Gladen-corrected pass rates of runs."
    )

    def add_arguments(self, parser):
        parser.add_argument("--judge", help="only this judge (an EvalRun.judge name, or 'rules (compiled)')")
        parser.add_argument(
            "--threshold", type=float, help="lower-bound threshold (default: settings.JUDGE_CERTIFICATION_THRESHOLD)"
        )
        parser.add_argument("--runs", help="comma-separated run ids whose corrected pass rates to print")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, **options):
        run_ids = self._run_ids(options["runs"])
        try:
            certs = certification.certify_judges(threshold=options["threshold"], judge=options["judge"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not certs:
            self.stdout.write(
                "No judge verdict matches a physician grade: draw a calibration sample and grade it at "
                "/results/calibration/ first. Nothing was stored."
            )
        else:
            self.stdout.write(
                f"Certified when the exact (Clopper–Pearson) 95% lower bounds of TPR and TNR are both ≥ "
                f"{certs[0].threshold:.2f}; physician grade = truth, pass = positive."
            )
            self.stdout.write(_table([presentation.CERT_HEADER, *(presentation.cert_cells(c) for c in certs)]))
            ceiling = certs[0].physician_kappa
            self.stdout.write(
                "Physician–physician κ (ceiling): "
                + ("— (no item graded twice)" if ceiling is None else f"{ceiling:.3f}")
            )
        if not run_ids:
            return
        runs = list(EvalRun.objects.filter(pk__in=run_ids).order_by("pk"))
        certs_now = certification.current_certifications()
        for run in tqdm(runs, desc="corrected pass rates", disable=options["quiet"], file=self.stderr):
            status = run_judge_status(run=run, certifications=certs_now)
            mark = {True: "certified", False: "NOT certified", None: "before certification"}[status.at_run_time]
            self.stdout.write(f"\nRun {run.pk} ({run.model}, judge {run.judge}): judge at run time {mark}")
            if status.current is None:
                self.stdout.write("  no certification of this judge: pass rates cannot be corrected")
                continue
            for corr in status.corrections:
                self.stdout.write(
                    f"  {corr.language}: {corr.n_sessions} sessions, {corr.n_turns} turns; "
                    f"{corr.reps} resamples ({corr.dropped} dropped: TPR + TNR ≤ 1)"
                )
                self.stdout.write(
                    _table([presentation.CORRECTION_HEADER, *(presentation.correction_cells(r) for r in corr.rates)])
                )

    def _run_ids(self, raw: str | None) -> list[int]:
        if not raw:
            return []
        try:
            ids = [int(part) for part in raw.split(",") if part.strip()]
        except ValueError:
            raise CommandError(f"--runs {raw!r}: expected comma-separated run ids, e.g. 3,4") from None
        known = set(EvalRun.objects.filter(pk__in=ids).values_list("pk", flat=True))
        if unknown := [i for i in ids if i not in known]:
            raise CommandError(f"--runs: unknown run id(s) {', '.join(map(str, unknown))}")
        return ids
