"""Importing one MIMIC-IV table: its files in one transaction, by the raw COPY or the validated rows.

:func:`import_table` is the unit :mod:`ehr.importer.service` runs for each table found: it clears
the table (or the selected subjects' rows), loads every file of the table and records the outcome
in the table's report instead of raising, so one bad table stops the import with a message and
not a traceback. On PostgreSQL a whole-table load first tries the file's bytes unchanged into COPY
and falls back to checking and converting each record (:func:`_load_validated`) when the file
needs it; SQLite always takes the validated path. The progress bar and the per-table warnings
(told once per kind, repeats counted) live here because they follow a table across its files.
"""

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from django.db import DatabaseError, connection, transaction
from tqdm import tqdm

from core.cache_generations import bump
from ehr.fhir import codes as fhir_codes
from ehr.importer import loaders, staged_load, staging
from ehr.importer.columns import (
    HeaderPlan,
    RowConverter,
    implausible_conditions,
    integer_columns,
    is_decimal_spelling,
    make_converter,
    plan_header,
    whole_number,
)
from ehr.importer.errors import RowError, TableImportError
from ehr.importer.layout import SourceFile
from ehr.importer.locate import locate_copy_error, locate_duplicate
from ehr.importer.rejects import FileRejects, TableRejects
from ehr.importer.report import TableReport
from ehr.importer.source import TableFile, shorten
from ehr.mimic_tables import MimicTableSpec
from ehr.selectors import EHR_GENERATION

Echo = Callable[[str], None]
PROGRESS_EVERY = 8192  # records between progress-bar updates on the validated path


@dataclass(frozen=True)
class ImportOptions:
    """What the caller asked for, the same for every table of one import."""

    subjects: set[int] | None
    skip_bad_rows: bool
    rejects_dir: Path
    progress: bool
    allow_fast_path: bool
    echo: Echo


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


def import_table(*, spec: MimicTableSpec, files: list[SourceFile], opts: ImportOptions, entry: TableReport) -> None:
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
    opts: ImportOptions,
    entry: TableReport,
    progress: _Progress,
    warnings: _Warnings,
    rejects: TableRejects | None,
) -> None:
    """Replace the table's rows (or its subjects' rows) with the files' rows, all or nothing.

    A whole-table PostgreSQL load goes through a staging table whose indexes are built in
    parallel (:mod:`ehr.importer.staging`) unless the table or the caller's transaction rules
    that out; then, as every other load, it runs in one transaction. Raises
    :class:`TableImportError` on bad input; nothing of the table is then committed.
    """
    # Dictionary tables have no subject_id: a --subjects import still replaces them whole.
    subjects = opts.subjects if spec.has_subject else None
    postgres = loaders.is_postgresql()
    whole_table = subjects is None
    load = FileLoad(
        spec=spec,
        files=files,
        subjects=subjects,
        raw_allowed=postgres and whole_table and rejects is None and opts.allow_fast_path,
        entry=entry,
        progress=progress,
        warnings=warnings,
        rejects=rejects,
    )
    blocker = staging.staging_blocker(spec=spec) if postgres and whole_table else "not a whole-table load"
    if blocker is not None and postgres and whole_table and not _in_callers_transaction():
        opts.echo(f"note: {spec.name}: indexes rebuilt one by one in the load transaction ({blocker})")
    try:
        if blocker is None:
            staged_load.load_staged(spec=spec, load=load)
        else:
            _load_in_one_transaction(spec=spec, load=load, entry=entry, progress=progress, subjects=subjects)
    except _RawCopyRejected as exc:
        # Rolled back by now; find the record outside the transaction (a re-read of the file).
        raise TableImportError(
            locate_copy_error(spec=spec, plan=exc.plan, path=exc.path, rejected=exc.rejected)
        ) from None
    except loaders.DuplicateKey as exc:
        raise TableImportError(locate_duplicate(spec=spec, files=files, duplicate=exc)) from None
    entry.method = "+".join(sorted(load.methods)) or ("copy-rows" if postgres else "insert")
    # The tools keep a copy of the dictionaries (and omr result names); other processes see the
    # new table within ehr.fhir.codes.CACHE_TTL_SECONDS.
    fhir_codes.clear_cache()
    bump(EHR_GENERATION)  # the review screens' cached evidence and admission header, in every process


def _in_callers_transaction() -> bool:
    return connection.in_atomic_block or not connection.get_autocommit()


def _load_in_one_transaction(
    *, spec: MimicTableSpec, load: "FileLoad", entry: TableReport, progress: _Progress, subjects: set[int] | None
) -> None:
    """Clear the table (or its subjects' rows), load, and (whole table, PostgreSQL) rebuild the indexes in place."""
    postgres = loaders.is_postgresql()
    with transaction.atomic():
        loaders.clear_table(spec=spec, subjects=subjects)
        bulk = (
            loaders.pg_bulk_load(spec=spec)
            if postgres and subjects is None
            else contextlib.nullcontext(loaders.RebuildTime())
        )
        with bulk as rebuild:
            load.run()
            progress.bar.set_postfix_str("indexing" if postgres and subjects is None else "committing")
    entry.rebuild_seconds = rebuild.seconds


@dataclass
class FileLoad:
    """Loading a table's files into the current transaction (the live table, or the staging copy)."""

    spec: MimicTableSpec
    files: list[SourceFile]
    subjects: set[int] | None
    raw_allowed: bool
    entry: TableReport
    progress: _Progress
    warnings: _Warnings
    rejects: TableRejects | None
    methods: set[str] = field(default_factory=set)
    # The target table refuses implausible rows itself (staging.PLAUSIBLE_CHECK): no scan after a raw COPY.
    plausibility_enforced: bool = False

    def run(self) -> None:
        postgres = loaders.is_postgresql()
        for source in self.files:
            rows = (
                _copy_raw(
                    spec=self.spec,
                    path=source.path,
                    progress=self.progress,
                    warnings=self.warnings,
                    plausibility_enforced=self.plausibility_enforced,
                )
                if self.raw_allowed
                else None
            )
            if rows is not None:
                self.methods.add("copy-csv")
            else:
                self.methods.add("copy-rows" if postgres else "insert")
                rows = _load_validated(
                    spec=self.spec,
                    source=source,
                    subjects=self.subjects,
                    progress=self.progress,
                    warnings=self.warnings,
                    rejects=self.rejects,
                )
            self.entry.rows_loaded += rows
            self.progress.file_done(source.path.stat().st_size)
        self.finish()

    def add_copied(self, *, rows: int) -> None:
        """The table's one file was copied raw by :mod:`ehr.importer.parallel_copy`."""
        self.methods.add("copy-csv")
        self.entry.rows_loaded += rows
        self.progress.file_done(self.files[0].path.stat().st_size)
        self.finish()

    def finish(self) -> None:
        if "copy-csv" in self.methods:
            # Raw bytes skipped the value repairs (NDC zeros): the same rule, in SQL, on the new rows.
            loaders.apply_sql_fixups(spec=self.spec)

    def header_warnings(self, *, label: str, plan: HeaderPlan) -> None:
        for text in plan.warnings():
            self.warnings.add(label=label, text=text)


class _Implausible(Exception):
    """The raw COPY loaded a value the validated path refuses as implausible: undo it, load row by row."""


def _copy_raw(
    *, spec: MimicTableSpec, path: Path, progress: _Progress, warnings: _Warnings, plausibility_enforced: bool
) -> int | None:
    """The file's bytes unchanged into COPY; ``None`` if the file needs the validated path instead.

    The COPY runs in a savepoint, so a file PostgreSQL refuses for a spelling the validated path
    converts (``22444183.0`` in an integer column) or for a ``\\.`` line is undone alone and the
    caller loads it again row by row, as is a file with an implausible value (found by a scan
    of the table after the COPY, or as the COPY goes when ``plausibility_enforced``: the
    staging table's check constraint). Any other refusal raises :class:`_RawCopyRejected`.
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
                copied = loaders.copy_csv_bytes(
                    spec=spec,
                    columns=plan.load_columns,
                    header=header_bytes,
                    chunks=source.chunks(),
                    on_chunk=lambda: progress.show(source),
                )
                if not plausibility_enforced and loaders.has_rows_where(
                    spec=spec, conditions=implausible_conditions(spec=spec, columns=plan.load_columns)
                ):
                    raise _Implausible
                return copied
        except _Implausible:
            warnings.add(label=label, text="implausible values: using the validated path, which names them")
        except loaders.EndOfDataMarker:
            kind = "a line is just '\\.' (COPY's end-of-data mark): using the validated path"
            warnings.add(label=label, text=kind)
        except loaders.CopyRejected as exc:
            if exc.constraint == staging.PLAUSIBLE_CHECK:
                warnings.add(label=label, text="implausible values: using the validated path, which names them")
                return None
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
