"""Agreement between judges and physicians (and between physicians), as on /results/calibration/agreement/."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from evaluation.calibration import stats

HEADER = ["judge", "slice", "value", "n", "agree %", "kappa", "kappa 95% CI"]


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows)


class Command(BaseCommand):
    help = "Print judge–physician agreement (percent, Cohen's κ with bootstrap 95% CI) and physician–physician."

    def add_arguments(self, parser):
        parser.add_argument(
            "--judge", help="only this judge (an EvalRun.judge name, e.g. rules, or 'rules (compiled)')"
        )
        parser.add_argument("--run", type=int, help="only the verdicts of this evaluation run")

    def handle(self, *args, **options):
        try:
            report = stats.agreement_report(judge=options["judge"], run_id=options["run"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not report.n_grades:
            self.stdout.write(
                "No physician grades yet. Draw a sample and grade it at /results/calibration/ "
                '(pass/fail grades are compared; "can\'t tell" is left out).'
            )
            self._judge_pairs(report)
            return
        paper = f"{100 * stats.PAPER_AGREEMENT:.2f}"
        self.stdout.write(
            f"Physician grades (pass/fail): {report.n_grades}. Paper's judge–annotator agreement: {paper}%"
        )
        self.stdout.write(f"κ 95% CI: percentile bootstrap, {stats.BOOTSTRAP_REPS} resamples, fixed seed.\n")
        rows = stats.table_rows(report)
        if rows:
            self.stdout.write("Judge vs physicians")
            self.stdout.write(_table([HEADER, *rows]))
        else:
            self.stdout.write("No judge verdict matches a physician grade (unscored items are left out).")
        self._judge_pairs(report)
        phys = report.physicians
        self.stdout.write("\nBetween physicians")
        if phys.n_units:
            n, percent, kappa, ci = phys.overall.cells()
            alpha = stats.format_statistic(phys.alpha)
            self.stdout.write(f"{n} items graded twice: {percent}% agreement, kappa {kappa} {ci}, alpha {alpha}")
            self.stdout.write(
                _table([["physician A", "physician B", "n", "agree %", "kappa"], *stats.physician_pair_rows(report)])
            )
        else:
            self.stdout.write("No item has been graded by two physicians yet.")
        for j in report.judges:
            if j.disagreements:
                self.stdout.write(f"\nDisagreements: {j.judge} ({len(j.disagreements)})")
                for c in j.disagreements:
                    judged = "pass" if c.judge_passed else "fail"
                    graded = "pass" if c.physician_passed else "fail"
                    where = (
                        reverse(
                            "evaluation:calibration_grade", kwargs={"pk": c.sample_id, "turn_result": c.turn_result_id}
                        )
                        if c.sample_id
                        else ""
                    )
                    self.stdout.write(
                        f"  result {c.turn_result_id} item {c.item} ({c.language} {c.task_type}): "
                        f"judge {judged}, {c.grader} {graded}  {where}"
                    )

    def _judge_pairs(self, report: stats.AgreementReport) -> None:
        if pair_rows := stats.judge_pair_rows(report):
            self.stdout.write("\nRules judge on compiled items vs other judges (every stored answer)")
            self.stdout.write(_table([["judge", "vs", "n", "agree %", "kappa", "kappa 95% CI"], *pair_rows]))
