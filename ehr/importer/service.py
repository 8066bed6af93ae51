"""Import a MIMIC-IV directory table by table (see the package docstring for the semantics)."""

import contextlib
import csv
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psycopg
from django.conf import settings
from django.db import DatabaseError, transaction
from tqdm import tqdm

from ehr.fhir import codes as fhir_codes
from ehr.importer import loaders
from ehr.importer.columns import HeaderPlan, RowConverter, make_converter, plan_header
from ehr.importer.errors import ImportArgumentError, RowError, TableImportError
from ehr.importer.report import ImportReport, TableReport
from ehr.importer.source import TableFile, find_table_file, shorten
from ehr.mimic_tables import TABLES, MimicTableSpec

Echo = Callable[[str], None]
PROGRESS_EVERY = 8192  # records between progress-bar updates on the validated path


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
    echo: Echo | None = None,
) -> ImportReport:
    """Import the MIMIC-IV tables found under ``root``; stops at the first table that fails.

    ``echo`` receives warnings and notes as they happen. ``allow_fast_path=False`` forces the
    validated row path on PostgreSQL (tests compare both paths). Raises
    :class:`ImportArgumentError` before touching the database if the arguments are unusable.
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
    found = {spec.name: find_table_file(root=root, stem=spec.path) for spec in selected}
    if not any(path for path, _ in found.values()):
        stems = ", ".join(f"{spec.path}.csv[.gz]" for spec in selected[:3])
        raise ImportArgumentError(f"{root}: no MIMIC-IV table file found (looked for {stems}, ...)")

    opts = _Options(
        subjects=subjects,
        skip_bad_rows=skip_bad_rows,
        rejects_dir=Path(rejects_dir) if rejects_dir else Path(settings.VAR_DIR) / "import_rejects",
        progress=progress,
        allow_fast_path=allow_fast_path,
        echo=echo or (lambda _message: None),
    )
    report = ImportReport(root=root)
    failed = False
    for spec in selected:
        path, ignored = found[spec.name]
        entry = TableReport(name=spec.name, path=path)
        report.tables.append(entry)
        if failed:
            continue  # status stays "not_run"
        if path is None:
            entry.status = "absent"
            opts.echo(f"note: {spec.path}.csv.gz / .csv not in {root}, {spec.name} skipped")
            continue
        for other in ignored:
            opts.echo(f"warning: {other} ignored, {path.name} is imported instead")
        _import_table(spec=spec, path=path, opts=opts, entry=entry)
        failed = entry.status == "failed"
    return report


def _import_table(*, spec: MimicTableSpec, path: Path, opts: _Options, entry: TableReport) -> None:
    """Import one file in one transaction; records the outcome in ``entry`` instead of raising."""
    started = time.monotonic()
    label = str(path)
    bar = tqdm(
        total=path.stat().st_size,
        desc=spec.name,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        disable=not opts.progress,
        file=sys.stderr,
        leave=True,
    )
    rejects: list[_Rejects] = []
    try:
        try:
            _load_file(spec=spec, path=path, opts=opts, entry=entry, bar=bar, rejects=rejects, fast=True)
        except loaders.EndOfDataMarker:
            message = f"{label}: a line is just '\\.' (COPY's end-of-data mark): using the validated path"
            entry.warnings.append(message)
            opts.echo(f"warning: {message}")
            bar.reset()
            _load_file(spec=spec, path=path, opts=opts, entry=entry, bar=bar, rejects=rejects, fast=False)
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
        if rejects:
            entry.rows_rejected = rejects[-1].count
            entry.rejects_file = rejects[-1].close()
        entry.seconds = time.monotonic() - started


def _load_file(
    *,
    spec: MimicTableSpec,
    path: Path,
    opts: _Options,
    entry: TableReport,
    bar: tqdm,
    rejects: "list[_Rejects]",
    fast: bool,
) -> None:
    """Read, check and load one file in one transaction; raises :class:`TableImportError` on bad input.

    ``fast`` allows the raw COPY path when the table and options permit it. A rejects writer,
    when bad rows are skipped, is appended to ``rejects`` for the caller to close.
    """
    label = str(path)
    with TableFile(path) as source:
        header_bytes, header = source.read_header()
        plan = plan_header(spec=spec, header=header, label=label)
        rejected: _Rejects | None = None
        if opts.skip_bad_rows:
            rejected = _Rejects(path=opts.rejects_dir / f"{spec.name}.rejects.csv", header=header)
            rejects.append(rejected)
        if fast:  # warn once, not again on a fallback
            for warning in plan.warnings(label):
                entry.warnings.append(warning)
                opts.echo(f"warning: {warning}")
        # Dictionary tables have no subject_id: a --subjects import still replaces them whole.
        subjects = opts.subjects if spec.has_subject else None
        postgres = loaders.is_postgresql()
        whole_table = subjects is None
        raw_copy = postgres and fast and whole_table and rejected is None and opts.allow_fast_path and plan.raw_copy_ok

        def show_progress() -> None:
            bar.update(source.raw_position() - bar.n)

        try:
            with transaction.atomic():
                loaders.clear_table(spec=spec, subjects=subjects)
                bulk = (
                    loaders.pg_bulk_load(spec=spec)
                    if postgres and whole_table
                    else contextlib.nullcontext(loaders.RebuildTime())
                )
                with bulk as rebuild:
                    if raw_copy:
                        entry.method = "copy-csv"
                        entry.rows_loaded = loaders.copy_csv_bytes(
                            spec=spec,
                            columns=plan.load_columns,
                            header=header_bytes,
                            chunks=source.chunks(),
                            on_chunk=show_progress,
                        )
                    else:
                        entry.method = "copy-rows" if postgres else "insert"
                        rows = _valid_rows(
                            source=source,
                            convert=make_converter(spec=spec, plan=plan),
                            plan=plan,
                            subjects=subjects,
                            rejects=rejected,
                            label=label,
                            on_progress=show_progress,
                        )
                        load = loaders.copy_rows if postgres else loaders.insert_rows
                        entry.rows_loaded = load(spec=spec, columns=plan.load_columns, rows=rows, label=label)
                    bar.set_postfix_str("indexing" if postgres and whole_table else "committing")
        except loaders.CopyRejected as exc:
            # Rolled back by now; find the record outside the transaction (a re-read of the file).
            raise TableImportError(_locate_copy_error(spec=spec, plan=plan, path=path, rejected=exc)) from None
        except loaders.DuplicateKey as exc:
            raise TableImportError(_locate_duplicate(plan=plan, path=path, duplicate=exc)) from None
        # The tools keep a copy of the dictionaries (and omr result names); other processes see the
        # new table within ehr.fhir.codes.CACHE_TTL_SECONDS.
        fhir_codes.clear_cache()
        show_progress()
    entry.rebuild_seconds = rebuild.seconds


def _valid_rows(
    *,
    source: TableFile,
    convert: RowConverter,
    plan: HeaderPlan,
    subjects: set[int] | None,
    rejects: "_Rejects | None",
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
                if int(fields[subject_index]) not in subjects:
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


def _locate_duplicate(*, plan: HeaderPlan, path: Path, duplicate: loaders.DuplicateKey) -> str:
    """``FILE:LINE`` of the second record with the duplicated key, by re-reading the file."""
    label = str(path)
    columns = [c.strip() for c in duplicate.columns.split(",")]
    if not set(columns) <= set(plan.header):
        return f"{label}: {duplicate}"
    positions = [plan.header.index(c) for c in columns]
    first: int | None = None
    with TableFile(path) as source:
        source.read_header()
        for start, fields in source.records():
            # PostgreSQL prints the key as text joined by ", "; the raw fields compare the same way.
            if len(fields) == len(plan.header) and ", ".join(fields[i] for i in positions) == duplicate.values:
                if first is not None:
                    key = f"({duplicate.columns})=({duplicate.values})"
                    return f"{label}:{start}: duplicate key {key}, first on line {first}"
                first = start
    return f"{label}: {duplicate}"


class _Rejects:
    """Rejected rows of one table as CSV: line, reason, then the record's raw fields. Opened on first use."""

    def __init__(self, *, path: Path, header: list[str]) -> None:
        self.path = path
        self.header = header
        self.count = 0
        self._file: IO[str] | None = None
        self._writer: Any = None  # csv writer objects have no public type
        # A rejects file from an earlier run would otherwise look like this run's result.
        path.unlink(missing_ok=True)

    def add(self, *, line: int, reason: str, fields: list[str]) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "w", newline="", encoding="utf-8")  # noqa: SIM115 - closed in close()
            self._writer = csv.writer(self._file)
            self._writer.writerow(["line", "reason", *self.header])
        self._writer.writerow([line, reason, *fields])
        self.count += 1

    def close(self) -> Path | None:
        if self._file is None:
            return None
        self._file.close()
        return self.path
