"""``manage.py export_inspect RUN_ID``: write a stored run as an Inspect AI ``.eval`` log."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.paths import probe_writable_dir
from evaluation.inspect_log import write_inspect_log
from evaluation.models import EvalRun, EvalStatus
from evaluation.services import default_output_dir


class Command(BaseCommand):
    help = "Write an evaluation run as an Inspect AI .eval log (open it with `inspect view --log-dir DIR`)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id", type=int)
        parser.add_argument("--output", help="Folder for the .eval file (default: the run's output folder).")

    def handle(self, *args, **options) -> None:
        run = EvalRun.objects.filter(pk=options["run_id"]).first()
        if run is None:
            raise CommandError(f"there is no evaluation run {options['run_id']}")
        if run.status == EvalStatus.RUNNING:
            raise CommandError(f"run {run.pk} is still running; export it when it has ended")
        if not run.turn_results.exists():
            raise CommandError(f"run {run.pk} has no stored turn results to export")
        output = Path(options["output"]) if options["output"] else Path(run.output_dir or default_output_dir(run))
        try:
            probe_writable_dir(output)
        except OSError as exc:
            raise CommandError(f"--output {output}: cannot write there ({exc.strerror or exc})") from None
        path = write_inspect_log(run=run, output_dir=output)
        note = "" if run.status == EvalStatus.FINISHED else f" (run status {run.status}: the log is marked so)"
        self.stdout.write(f"inspect log: {path}{note}")
