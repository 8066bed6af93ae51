"""Import a MIMIC-IV directory table by table (see the package docstring for the semantics)."""

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
from django.conf import settings
from django.db import DatabaseError, transaction
from tqdm import tqdm

from ehr.fhir import codes as fhir_codes
from ehr.importer import loaders
from ehr.importer.columns import (
    HeaderPlan,
    RowConverter,
    integer_columns,
    is_decimal_spelling,
    make_converter,
    plan_header,
    whole_number,
)
from ehr.importer.errors import ImportArgumentError, RowError, TableImportError
from ehr.importer.layout import SourceFile, find_layout
from ehr.importer.rejects import FileRejects, TableRejects
from ehr.importer.report import ImportReport, TableReport
from ehr.importer.source import TableFile, shorten
from ehr.mimic_tables import TABLES, MimicTableSpec

Echo = Callable[[str], None]
PROGRESS_EVERY = 8192  # records between progress-bar updates on the validated path
SHOWN_IGNORED = 3  # "X ignored, Y imported instead" lines per table before they are summed up


@dataclass(frozen=True)
class _Options:
    subjects: set[int] | None
    skip_bad_rows: bool
    rejects_dir: Path
    progress: bool
    allow_fast_path: bool
    echo: Echo


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

    opts = _Options(
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
        _import_table(spec=spec, files=files, opts=opts, entry=entry)
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


class _Progress:
    """One bar per table across its files: bytes of finished files plus the position in the current one."""

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar
        self.done = 0

    def show(self, source: TableFile) -> None:
        # May go back: a file that leaves the raw path is read again from its start.
        self.bar.update(self.done + source.raw_position() - self.bar.n)

    def file_done(self, size: int) -> None:
        self.done += size
        self.bar.update(self.done - self.bar.n)


class _Warnings:
    """A table's warnings and notes: each kind told once, with its first file; repeats counted."""

    def __init__(self, *, entry: TableReport, echo: Echo) -> None:
        self.entry = entry
        self.echo = echo
        self._files: dict[tuple[str, str], set[str]] = {}  # (level, kind) → files it was seen in

    def add(self, *, label: str, text: str, level: str = "warning", kind: str | None = None) -> None:
        files = self._files.setdefault((level, kind or text), set())
        if not files:
            message = f"{label}: {text}"
            self.entry.warnings.append(message)
            self.echo(f"{level}: {message}")
        files.add(label)

    def finish(self) -> None:
        for (level, kind), files in self._files.items():
            if len(files) > 1:
                message = f"{self.entry.name}: the same in {len(files) - 1} more file(s): {kind}"
                self.entry.warnings.append(message)
                self.echo(f"{level}: {message}")


@dataclass
class _RawCopyRejected(Exception):
    """PostgreSQL refused a file's raw COPY for a reason the validated path would refuse too."""

    path: Path
    plan: HeaderPlan
    rejected: loaders.CopyRejected


def _import_table(*, spec: MimicTableSpec, files: list[SourceFile], opts: _Options, entry: TableReport) -> None:
    """Import one table's files in one transaction; records the outcome in ``entry`` instead of raising."""
    started = time.monotonic()
    label = str(files[0].path) if len(files) == 1 else spec.name
    bar = tqdm(
        total=sum(f.path.stat().st_size for f in files),
        desc=spec.name,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        disable=not opts.progress,
        file=sys.stderr,
        leave=True,
    )
    rejects = TableRejects(directory=opts.rejects_dir, table=spec.name) if opts.skip_bad_rows else None
    warnings = _Warnings(entry=entry, echo=opts.echo)
    try:
        _load_table(
            spec=spec, files=files, opts=opts, entry=entry, progress=_Progress(bar), warnings=warnings, rejects=rejects
        )
        entry.status = "loaded"
    except TableImportError as exc:
        entry.status, entry.error, entry.rows_loaded = "failed", str(exc), 0
    except (DatabaseError, psycopg.Error) as exc:
        # Database down, disk full, lock timeout...: reported like a bad file, never a traceback.
        entry.status, entry.error, entry.rows_loaded = "failed", f"{label}: database error: {exc}".strip(), 0
    except KeyboardInterrupt:
        # Ctrl-C: the table is rolled back and the report still says what was committed before it.
        entry.status, entry.error, entry.rows_loaded = "failed", f"{label}: interrupted", 0
    finally:
        bar.close()
        warnings.finish()
        if rejects is not None:
            entry.rows_rejected = rejects.count
            entry.rejects_files = rejects.close()
        entry.seconds = time.monotonic() - started


def _load_table(
    *,
    spec: MimicTableSpec,
    files: list[SourceFile],
    opts: _Options,
    entry: TableReport,
    progress: _Progress,
    warnings: _Warnings,
    rejects: TableRejects | None,
) -> None:
    """Clear the table (or its subjects' rows) and load every file, all in one transaction.

    Raises :class:`TableImportError` on bad input; nothing of the table is then committed.
    """
    # Dictionary tables have no subject_id: a --subjects import still replaces them whole.
    subjects = opts.subjects if spec.has_subject else None
    postgres = loaders.is_postgresql()
    whole_table = subjects is None
    raw_allowed = postgres and whole_table and rejects is None and opts.allow_fast_path
    methods: set[str] = set()
    try:
        with transaction.atomic():
            loaders.clear_table(spec=spec, subjects=subjects)
            bulk = (
                loaders.pg_bulk_load(spec=spec)
                if postgres and whole_table
                else contextlib.nullcontext(loaders.RebuildTime())
            )
            with bulk as rebuild:
                for source in files:
                    rows = (
                        _copy_raw(spec=spec, path=source.path, progress=progress, warnings=warnings)
                        if raw_allowed
                        else None
                    )
                    if rows is not None:
                        methods.add("copy-csv")
                    else:
                        methods.add("copy-rows" if postgres else "insert")
                        rows = _load_validated(
                            spec=spec,
                            source=source,
                            subjects=subjects,
                            progress=progress,
                            warnings=warnings,
                            rejects=rejects,
                        )
                    entry.rows_loaded += rows
                    progress.file_done(source.path.stat().st_size)
                if "copy-csv" in methods:
                    # Raw bytes skipped the value repairs (NDC zeros): the same rule, in SQL, on the new rows.
                    loaders.apply_sql_fixups(spec=spec)
                progress.bar.set_postfix_str("indexing" if postgres and whole_table else "committing")
    except _RawCopyRejected as exc:
        # Rolled back by now; find the record outside the transaction (a re-read of the file).
        raise TableImportError(
            _locate_copy_error(spec=spec, plan=exc.plan, path=exc.path, rejected=exc.rejected)
        ) from None
    except loaders.DuplicateKey as exc:
        raise TableImportError(_locate_duplicate(spec=spec, files=files, duplicate=exc)) from None
    entry.method = "+".join(sorted(methods)) or ("copy-rows" if postgres else "insert")
    # The tools keep a copy of the dictionaries (and omr result names); other processes see the
    # new table within ehr.fhir.codes.CACHE_TTL_SECONDS.
    fhir_codes.clear_cache()
    entry.rebuild_seconds = rebuild.seconds


def _copy_raw(*, spec: MimicTableSpec, path: Path, progress: _Progress, warnings: _Warnings) -> int | None:
    """The file's bytes unchanged into COPY; ``None`` if the file needs the validated path instead.

    The COPY runs in a savepoint, so a file PostgreSQL refuses for a spelling the validated path
    converts (``22444183.0`` in an integer column) or for a ``\\.`` line is undone alone and the
    caller loads it again row by row. Any other refusal raises :class:`_RawCopyRejected`.
    """
    label = str(path)
    with TableFile(path) as source:
        header_bytes, header = source.read_header()
        plan = plan_header(spec=spec, header=header, label=label)
        for text in plan.warnings():
            warnings.add(label=label, text=text)
        if not plan.raw_copy_ok:
            return None
        try:
            with transaction.atomic():
                return loaders.copy_csv_bytes(
                    spec=spec,
                    columns=plan.load_columns,
                    header=header_bytes,
                    chunks=source.chunks(),
                    on_chunk=lambda: progress.show(source),
                )
        except loaders.EndOfDataMarker:
            kind = "a line is just '\\.' (COPY's end-of-data mark): using the validated path"
            warnings.add(label=label, text=kind)
        except loaders.CopyRejected as exc:
            value = exc.value or ""
            if exc.column not in integer_columns(spec) or not is_decimal_spelling(value):
                raise _RawCopyRejected(path=path, plan=plan, rejected=exc) from None
            kind = f"integer column {exc.column} written with a decimal point: using the validated path"
            warnings.add(label=label, text=f"{kind} (e.g. '{shorten(value)}')", level="note", kind=kind)
    return None


def _load_validated(
    *,
    spec: MimicTableSpec,
    source: SourceFile,
    subjects: set[int] | None,
    progress: _Progress,
    warnings: _Warnings,
    rejects: TableRejects | None,
) -> int:
    """Check and convert each record of one file, then COPY (PostgreSQL) or INSERT (SQLite) it."""
    label = str(source.path)
    with TableFile(source.path) as table_file:
        _, header = table_file.read_header()
        plan = plan_header(spec=spec, header=header, label=label)
        for text in plan.warnings():
            warnings.add(label=label, text=text)
        rows = _valid_rows(
            source=table_file,
            convert=make_converter(spec=spec, plan=plan),
            plan=plan,
            subjects=subjects,
            rejects=rejects.for_file(source=source, header=header) if rejects is not None else None,
            label=label,
            on_progress=lambda: progress.show(table_file),
        )
        load = loaders.copy_rows if loaders.is_postgresql() else loaders.insert_rows
        count = load(spec=spec, columns=plan.load_columns, rows=rows, label=label)
        progress.show(table_file)
        return count


def _valid_rows(
    *,
    source: TableFile,
    convert: RowConverter,
    plan: HeaderPlan,
    subjects: set[int] | None,
    rejects: FileRejects | None,
    label: str,
    on_progress: Callable[[], None],
) -> Iterator[loaders.Row]:
    """Validated rows of the selected subjects; a bad row raises, or goes to ``rejects`` if given."""
    subject_index = plan.subject_index
    for n, (line, fields) in enumerate(source.records(), start=1):
        if n % PROGRESS_EVERY == 0:
            on_progress()
        if subjects is not None and subject_index is not None and len(fields) > subject_index:
            # Rows of other subjects are skipped unchecked; an unreadable subject_id is checked below.
            with contextlib.suppress(ValueError):
                if whole_number(fields[subject_index]) not in subjects:
                    continue
        try:
            values = convert(fields)
        except RowError as exc:
            if rejects is None:
                raise TableImportError(f"{label}:{line}: {exc}") from None
            rejects.add(line=line, reason=str(exc), fields=fields)
            continue
        yield line, values


def _locate_copy_error(*, spec: MimicTableSpec, plan: HeaderPlan, path: Path, rejected: loaders.CopyRejected) -> str:
    """Turn PostgreSQL's COPY error into ``FILE:LINE: ...`` with the physical line the record starts on.

    PostgreSQL's counter gives the line a record *ends* on. Re-reading the file up to there finds
    the record; checking it with the validated path's rules gives the same message that path gives.
    """
    label = str(path)
    db_message = f"rejected by the database: {rejected}"
    if rejected.column:
        db_message += f" (column {rejected.column}, value '{shorten(rejected.value or '')}')"
    if rejected.line is None:
        return f"{label}: {db_message}"
    if rejected.line <= 1:
        return f"{label}:1: {db_message}"
    found: tuple[int, list[str]] | None = None
    with TableFile(path) as source:
        source.read_header()
        for start, fields in source.records():  # a malformed record before the line raises its own message
            if start > rejected.line:
                break
            found = (start, fields)
    if found is None:
        return f"{label}:{rejected.line}: {db_message}"
    start, fields = found
    try:
        make_converter(spec=spec, plan=plan)(fields)
    except RowError as exc:
        return f"{label}:{start}: {exc}"
    return f"{label}:{start}: {db_message}"


def _locate_duplicate(*, spec: MimicTableSpec, files: list[SourceFile], duplicate: loaders.DuplicateKey) -> str:
    """``FILE:LINE`` of the second record with the duplicated key, by re-reading the table's files."""
    columns = [c.strip() for c in duplicate.columns.split(",")]
    integers = integer_columns(spec)

    def key_text(raw: str, column: str) -> str:
        # PostgreSQL prints the stored integer: "22444183.0" in the file was stored as 22444183.
        if column in integers:
            with contextlib.suppress(ValueError):
                return str(whole_number(raw))
        return raw

    first: tuple[Path, int] | None = None
    for source in files:
        label = str(source.path)
        with TableFile(source.path) as table_file:
            _, header = table_file.read_header()
            if not set(columns) <= set(header):
                continue
            positions = [header.index(c) for c in columns]
            for start, fields in table_file.records():
                # PostgreSQL prints the key as text joined by ", "; the fields compare the same way.
                if len(fields) != len(header):
                    continue
                if (
                    ", ".join(key_text(fields[i], c) for i, c in zip(positions, columns, strict=True))
                    != duplicate.values
                ):
                    continue
                if first is None:
                    first = (source.path, start)
                    continue
                where = f"line {first[1]}" if first[0] == source.path else f"{first[0]}:{first[1]}"
                return f"{label}:{start}: duplicate key ({duplicate.columns})=({duplicate.values}), first on {where}"
    return f"{files[0].path if len(files) == 1 else spec.name}: {duplicate}"
