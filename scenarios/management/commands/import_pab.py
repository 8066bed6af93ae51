"""``import_pab FILE... [--replace] [--no-compile] [--quiet]``: load PhysAssistBench JSONL sessions, all or
nothing per file; rubric items of official records get the rubric compiler's suggestions (coverage printed)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scenarios.audit import audit_sessions
from scenarios.models import Session
from scenarios.pab import FileImport, import_pab_file


class Command(BaseCommand):
    help = (
        "Import PhysAssistBench session records (JSONL). Each file is loaded in one transaction: a malformed "
        "record is reported as FILE:LINE: field 'x': ... and nothing from that file is kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE", help="JSONL file(s), one session per line")
        parser.add_argument("--replace", action="store_true", help="replace sessions whose id already exists")
        parser.add_argument(
            "--no-compile",
            action="store_true",
            help="do not run the rubric compiler on the imported items (compile_rubrics can do it later)",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary")

    def handle(self, *args: object, **options: object) -> None:
        quiet = bool(options["quiet"])
        results: list[FileImport] = []
        for name in options["files"]:  # type: ignore[union-attr]
            try:
                result = import_pab_file(
                    path=Path(str(name)),
                    replace=bool(options["replace"]),
                    progress=not quiet,
                    compile_rubrics=not options["no_compile"],
                )
            except KeyboardInterrupt:
                done = ", ".join(str(r.path) for r in results if r.ok) or "none"
                raise CommandError(f"interrupted: {name} rolled back; files already loaded: {done}") from None
            results.append(result)
            for error in result.errors:
                self.stderr.write(error)
            if not quiet:
                self.stdout.write(self._line(result))
                if result.ok and result.coverage.n:
                    self.stdout.write("  " + result.coverage.summary_line())
                if result.ok and result.aligned:
                    shown = ", ".join(result.aligned[:5]) + (
                        f" and {len(result.aligned) - 5} more" if len(result.aligned) > 5 else ""
                    )
                    self.stdout.write(
                        f"  {len(result.aligned)} prepare_to_answer observation(s) differed from the conversation's "
                        f"answer and were set to it: {shown}"
                    )
        failed = [r for r in results if not r.ok]
        if not quiet:
            total = sum(r.loaded for r in results)
            self.stdout.write(f"{total} session(s) loaded from {len(results) - len(failed)} of {len(results)} file(s).")
        self._audit(results, quiet=quiet)
        if failed:
            names = ", ".join(str(r.path) for r in failed)
            raise CommandError(f"{len(failed)} file(s) failed and were not loaded: {names}")

    def _audit(self, results: list[FileImport], *, quiet: bool) -> None:
        """Gold audit of what was loaded (stored for the review screen); its totals line unless quiet."""
        runs = [r.run_id for r in results if r.ok and r.run_id is not None]
        if not runs:
            return
        try:
            report = audit_sessions(sessions=Session.objects.filter(run_id__in=runs), bounds="strict")
        except Exception as exc:  # the sessions are loaded: a failing audit must not look like a failed import
            self.stderr.write(f"gold audit could not run: {type(exc).__name__}: {exc} (run manage.py audit_gold)")
            return
        if not quiet:
            self.stdout.write(report.totals_line())

    @staticmethod
    def _line(result: FileImport) -> str:
        if not result.ok:
            return f"{result.path}: FAILED, nothing loaded ({len(result.errors)} error(s))"
        replaced = f" ({result.replaced} replaced)" if result.replaced else ""
        return f"{result.path}: {result.loaded} session(s) loaded{replaced}, run {result.run_id}"
