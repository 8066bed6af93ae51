"""Import a MIMIC-IV directory table by table (see the package docstring for the semantics).

This is the entry point: it checks the arguments and the folder's layout before touching the
database, refuses header-only tables unless asked, and then runs
:func:`ehr.importer.table_import.import_table` for each selected table, stopping after the first
that fails. How a table is loaded lives in :mod:`ehr.importer.table_import`.
"""

from pathlib import Path

from django.conf import settings

from ehr.importer.errors import ImportArgumentError, TableImportError
from ehr.importer.layout import SourceFile, find_layout
from ehr.importer.report import ImportReport, TableReport
from ehr.importer.source import TableFile
from ehr.importer.table_import import Echo, ImportOptions, import_table
from ehr.mimic_tables import TABLES, MimicTableSpec

SHOWN_IGNORED = 3  # "X ignored, Y imported instead" lines per table before they are summed up


def import_mimic_directory(
    *,
    root: Path,
    subjects: set[int] | None = None,
    tables: list[str] | None = None,
    skip_bad_rows: bool = False,
    rejects_dir: Path | None = None,
    progress: bool = False,
    allow_fast_path: bool = True,
    allow_empty: bool = False,
    echo: Echo | None = None,
) -> ImportReport:
    """Import the MIMIC-IV tables found under ``root`` (either layout); stops at the first table that fails.

    ``echo`` receives warnings and notes as they happen. ``allow_fast_path=False`` forces the
    validated row path on PostgreSQL (tests compare both paths). Raises
    :class:`ImportArgumentError` before touching the database if the arguments or the folder's
    layout are unusable, or if a table's files hold no record at all (header only) and
    ``allow_empty`` is not set: importing them would empty the table (or the subjects' rows).
    """
    root = Path(root)
    if not root.is_dir():
        raise ImportArgumentError(f"{root}: no such directory")
    unknown = sorted(set(tables or []) - set(TABLES))
    if unknown:
        raise ImportArgumentError(f"unknown table(s): {', '.join(unknown)} (known: {', '.join(TABLES)})")
    if subjects is not None and not subjects:
        raise ImportArgumentError("the subject list is empty")
    selected = [spec for name, spec in TABLES.items() if tables is None or name in tables]
    layout = find_layout(root=root, specs=selected, subjects=subjects)
    if not allow_empty and (empty := _empty_tables(specs=selected, files=layout.files, subjects=subjects)):
        raise ImportArgumentError(
            "\n".join(empty) + "\nnothing was imported; pass --allow-empty to import an empty table anyway"
        )

    opts = ImportOptions(
        subjects=subjects,
        skip_bad_rows=skip_bad_rows,
        rejects_dir=Path(rejects_dir) if rejects_dir else Path(settings.VAR_DIR) / "import_rejects",
        progress=progress,
        allow_fast_path=allow_fast_path,
        echo=echo or (lambda _message: None),
    )
    for note in layout.notes:
        opts.echo(note)
    report = ImportReport(root=root)
    failed = False
    for spec in selected:
        files = layout.files.get(spec.name)
        entry = TableReport(name=spec.name, path=files[0].path if files else None, files=[f.path for f in files or []])
        report.tables.append(entry)
        if failed:
            continue  # status stays "not_run"
        if files is None:
            entry.status = "absent"
            opts.echo(layout.absent_note(spec=spec, root=root))
            continue
        ignored = layout.ignored.get(spec.name, [])
        for other, chosen in ignored[:SHOWN_IGNORED]:
            opts.echo(f"warning: {other} ignored, {chosen.name} is imported instead")
        if len(ignored) > SHOWN_IGNORED:
            opts.echo(f"warning: {len(ignored) - SHOWN_IGNORED} more {spec.name} file(s) ignored the same way")
        import_table(spec=spec, files=files, opts=opts, entry=entry)
        failed = entry.status == "failed"
    return report


def _has_record(path: Path) -> bool:
    """Whether the file holds a record after its header; an unreadable file counts as one (its import names
    the problem)."""
    try:
        with TableFile(path) as source:
            source.read_header()
            return next(iter(source.records()), None) is not None
    except TableImportError:
        return True


def _empty_tables(
    *, specs: list[MimicTableSpec], files: dict[str, list[SourceFile]], subjects: set[int] | None
) -> list[str]:
    """One message per table whose files (all of them, in the per-patient layout) are header only.

    A header-only file is far more often a failed extract than a table that is really empty, and
    importing it would silently replace the table's rows with nothing.
    """
    empty: list[str] = []
    for spec in specs:
        paths = [f.path for f in files.get(spec.name) or []]
        if not paths or any(_has_record(path) for path in paths):
            continue
        where = f"{paths[0]}: no rows" if len(paths) == 1 else f"{spec.name}: none of its {len(paths)} files has a row"
        rows = "the selected subjects' rows" if subjects is not None and spec.has_subject else "every row"
        empty.append(f"{where} (header only); importing it would delete {rows} of {spec.name}")
    return empty
