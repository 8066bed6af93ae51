"""Where in the file a record the database refused starts: ``FILE:LINE`` messages after a failed COPY.

PostgreSQL reports a refused raw COPY by the line a record *ends* on, and a duplicate key only
when the keys are re-added after the whole table is in; neither names the physical line a person
would open. These helpers re-read the table's files (outside the rolled-back transaction) to find
that line, and reuse the validated path's checks so both paths word a bad value the same way.
"""

import contextlib
from pathlib import Path

from ehr.importer import loaders
from ehr.importer.columns import HeaderPlan, integer_columns, make_converter, whole_number
from ehr.importer.errors import RowError
from ehr.importer.layout import SourceFile
from ehr.importer.source import TableFile, shorten
from ehr.mimic_tables import MimicTableSpec


def locate_copy_error(*, spec: MimicTableSpec, plan: HeaderPlan, path: Path, rejected: loaders.CopyRejected) -> str:
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


def locate_duplicate(*, spec: MimicTableSpec, files: list[SourceFile], duplicate: loaders.DuplicateKey) -> str:
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
