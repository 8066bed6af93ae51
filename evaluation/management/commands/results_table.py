"""Print the results table of finished runs (paper layout in LaTeX, or CSV / Markdown)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.results import exports, selectors


def _ids(text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--runs: expected comma-separated run ids, got {text!r}") from None
    if not ids:
        raise CommandError("--runs: no run id given")
    return ids


class Command(BaseCommand):
    help = "Results table of evaluation runs: LaTeX (booktabs, the paper's layout), CSV or Markdown."

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--runs", help="comma-separated run ids, in table order")
        which.add_argument("--latest", type=int, help="the N most recent finished runs")
        parser.add_argument("--format", choices=("latex", "csv", "markdown", "json"), default="latex")

    def handle(self, *args, **options) -> None:
        if options["runs"]:
            ids = _ids(options["runs"])
            try:
                runs = selectors.get_runs(ids=ids)
            except LookupError as exc:
                raise CommandError(str(exc)) from None
            unfinished = [r.pk for r in runs if r.status != "finished"]
            if unfinished:
                raise CommandError(f"run(s) not finished: {', '.join(map(str, unfinished))}")
            rows = [selectors.run_row(run=r) for r in runs]
        else:
            latest = options["latest"]
            if latest is not None and latest < 1:
                raise CommandError("--latest must be at least 1")
            runs = selectors.finished_runs().order_by("-finished_at", "-pk")
            rows = [selectors.run_row(run=r) for r in (runs[:latest] if latest else runs)]
            if not rows:
                raise CommandError("there is no finished run yet (run one with `manage.py runeval`)")
        self.stdout.write(exports.render_leaderboard(rows, fmt=options["format"]), ending="")
