"""``import_mimic DIR [--subjects ID ...] [--tables NAME ...] [--skip-bad-rows] [--rejects-dir DIR] [--allow-empty]
[--quiet]``."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ehr.importer import ImportArgumentError, format_summary, import_mimic_directory
from ehr.mimic_tables import TABLES


def _subject_ids(values: list[str] | None) -> set[int] | None:
    """``--subjects 1 2`` or ``--subjects 1,2``; a non-integer is a CommandError, not a traceback."""
    if values is None:
        return None
    ids: set[int] = set()
    for token in (t.strip() for v in values for t in v.split(",")):
        if not token:
            continue
        if not token.isdigit():
            raise CommandError(f"--subjects: {token!r} is not a subject_id (expected a positive integer)")
        ids.add(int(token))
    if not ids:
        raise CommandError("--subjects: no subject_id given")
    return ids


class Command(BaseCommand):
    help = (
        "Import MIMIC-IV CSV/CSV.GZ files into the EHR tables. DIR is either the standard layout "
        "(DIR/hosp/labevents.csv.gz, DIR/icu/..., DIR/note/...) or the release's per-patient layout "
        "(DIR/<subject_id>/hosp_labevents.csv.csv.gz, also .csv.gz or .csv), whose files of one table are "
        "loaded together as that table. A DIR mixing both layouts, or a per-patient DIR with a folder "
        "not named by an integer subject_id, is refused before anything is loaded. Integer "
        "columns accept pandas' decimal spelling (22444183.0, not 12.5); numeric NDC codes get their "
        "leading zeros back (409176230.0 -> 00409176230). A table whose file is header only (no row) is "
        "refused before anything is loaded unless --allow-empty. Each table is replaced in its own transaction; "
        "re-running gives the same contents."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", help="MIMIC-IV root folder: hosp/, icu/, note/ inside, or one folder per subject_id")
        parser.add_argument(
            "--subjects",
            nargs="+",
            metavar="ID",
            help="only these subject_ids (their rows are replaced; per-patient layout: only their folders are read)",
        )
        parser.add_argument("--tables", nargs="+", metavar="NAME", help=f"only these tables (of: {', '.join(TABLES)})")
        parser.add_argument(
            "--skip-bad-rows", action="store_true", help="write bad rows to a rejects file and continue"
        )
        parser.add_argument("--rejects-dir", help="folder for rejects files (default: var/import_rejects)")
        parser.add_argument(
            "--allow-empty",
            action="store_true",
            help="import a table whose file has a header but no row (this empties the table); refused otherwise",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary")

    def handle(self, *args: object, **options: object) -> None:
        quiet = bool(options["quiet"])
        try:
            report = import_mimic_directory(
                root=Path(str(options["dir"])),
                subjects=_subject_ids(options["subjects"]),  # type: ignore[arg-type]
                tables=options["tables"],  # type: ignore[arg-type]
                skip_bad_rows=bool(options["skip_bad_rows"]),
                rejects_dir=Path(str(options["rejects_dir"])) if options["rejects_dir"] else None,
                progress=not quiet,
                allow_empty=bool(options["allow_empty"]),
                echo=lambda message: self.stderr.write(message),
            )
        except ImportArgumentError as exc:
            raise CommandError(str(exc)) from None
        if not quiet:
            self.stdout.write(format_summary(report))
            for entry in report.tables:
                if len(entry.rejects_files) == 1:
                    self.stdout.write(f"{entry.name}: {entry.rows_rejected} rejected row(s) in {entry.rejects_file}")
                elif entry.rejects_files:
                    where = entry.rejects_files[0].parent / f"{entry.name}.*.rejects.csv"
                    count = len(entry.rejects_files)
                    self.stdout.write(f"{entry.name}: {entry.rows_rejected} rejected row(s) in {count} files ({where})")
        if failed := report.failed:
            raise CommandError(f"{failed.error}\n{failed.name} rolled back; {report.outcome_line()}")
