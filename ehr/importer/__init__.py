r"""MIMIC-IV importer: CSV / CSV.GZ files of the real layout into the ``ehr`` tables.

Layout and selection
    Standard: ``ROOT/hosp/NAME.csv.gz``, ``ROOT/icu/NAME.csv.gz``, ``ROOT/note/NAME.csv.gz`` (or
    ``.csv``; ``.csv.gz`` wins if both exist). Per-patient (the PhysAssistBench release):
    ``ROOT/<subject_id>/<module>_NAME.csv.csv.gz`` (or ``.csv.gz``, ``.csv``), all patients' files of
    a table loaded together as that table; the rules for mixed or odd folders are in
    :mod:`ehr.importer.layout`. The tables, their files and columns come from
    :data:`ehr.mimic_tables.TABLES`, imported in its order. A table whose file is absent is
    skipped with a note (the public MIMIC-IV demo has no ``note/``). A table whose files hold a
    header but no record is refused before anything is loaded (it would empty the table, or the
    selected subjects' rows), unless ``allow_empty`` (``--allow-empty``) is given.

Transactions and idempotency
    Each table is imported in its own transaction that replaces its content: without subjects
    the whole table is emptied and reloaded; with subjects, those subjects' rows are deleted and
    only their rows are loaded (dictionary tables, which have no ``subject_id``, are loaded whole).
    In the per-patient layout all files of a table share that one transaction. (A staged
    PostgreSQL load, below, commits into a staging table first; the live table changes only in
    its final swap transaction, so the outcome is the same: all of the table's rows, or none.) Re-running an
    import therefore leaves identical contents. The run stops at the first table
    that fails: that table is rolled back, tables finished before it stay committed, later ones
    are not run; the report says which is which.

Headers
    Missing required (non-nullable) columns → error naming them. Missing nullable columns → NULL,
    with a warning. Unknown extra columns → ignored, with a warning. Duplicate names → error.

Values
    Empty field = NULL. Integers within the column type's range, also written as whole decimals
    (``22444183.0``, as pandas writes them; ``12.5`` is an error); floats in decimal notation;
    dates ``YYYY-MM-DD``; datetimes ``YYYY-MM-DD HH:MM:SS`` or ``YYYY-MM-DD`` (midnight), naive
    wall-clock times stored as UTC (``TIME_ZONE=UTC``); text as written, within ``max_length``.
    A bad row (wrong number of fields, unparsable value, empty required value) stops the table
    with ``FILE:LINE: what is wrong (column X, value 'v')``, LINE being the physical line the
    record starts on (header = 1; newlines inside quoted fields count). A gzip file that ends
    early gives ``FILE: truncated gzip after line N``. With ``skip_bad_rows`` bad rows go to
    ``REJECTS_DIR/TABLE.rejects.csv`` (line, reason, raw fields; per-patient layout: one
    ``TABLE.<folder>.rejects.csv`` per file with bad rows) and the import goes on;
    file-level errors (header, gzip, malformed CSV quoting) still stop the table.
    With subjects, rows of other subjects are skipped before validation.

Loading
    PostgreSQL, whole-table loads from autocommit (the command, the Celery task): the files go into
    a staging copy of the table without indexes (committed), its primary key and indexes are built
    at the same time on one connection each, and one short transaction swaps it for the live
    table (:mod:`ehr.importer.staging`); the live table is untouched until then, so a failure at
    any stage leaves it as it was. Inside a caller's transaction, or for a table a swap does not
    suit (foreign keys, views, triggers, grants: a note says which), whole-table loads run
    TRUNCATE, drop the indexes and the primary key / unique constraints, load, and rebuild them
    one by one in the same transaction (one sorted build per index is much cheaper than
    maintaining them row by row; a key some foreign key depends on stays).
    Without subjects and without ``skip_bad_rows``, and when the file has no unknown columns,
    the decompressed bytes go unchanged into ``COPY ... FROM STDIN (FORMAT csv)``
    (the fast path); PostgreSQL then checks the values, and its error is mapped back to the same
    ``FILE:LINE`` message by re-reading the file up to the reported record. PostgreSQL accepts a
    few spellings the validated path refuses (``' 5'`` for an integer; ``05/06/2180 10:00`` or
    ``yesterday`` for a datetime), so the fast path is more lenient there. Each file's COPY runs in
    a savepoint: a file PostgreSQL refuses only for a whole decimal in an integer column, or with a
    line that is just ``\.`` (COPY's end-of-data mark), or with an implausible value (the staging
    table's check constraint refuses it as COPY goes; otherwise a scan after the COPY finds it), is
    undone alone and loaded again through the validated path (a note says so). Value repairs
    (:mod:`ehr.importer.codes`, NDC leading zeros) run per value on the validated path and as one
    UPDATE after raw COPY. Off the fast path,
    validated rows go through COPY in 50,000-row statements. As keys are re-added after a
    whole-table load, a duplicate key is found then and located by re-reading the table's files.
    Bad UTF-8 is located the same way. SQLite: validated rows in batched INSERTs. Rows refused by
    the database itself (duplicate primary key) stop the table with the line of the row.
"""

from ehr.importer.errors import ImportArgumentError, TableImportError
from ehr.importer.report import ImportReport, TableReport, format_summary
from ehr.importer.service import import_mimic_directory

__all__ = [
    "ImportArgumentError",
    "ImportReport",
    "TableImportError",
    "TableReport",
    "format_summary",
    "import_mimic_directory",
]
