"""Whole-table PostgreSQL imports through a staging table with parallel index builds (``ehr.importer.staging``).

The reference is the single-transaction load the importer used before (and still uses inside a
caller's transaction): the staged load must leave the same rows, the same indexes and the same
constraints, continue identity numbering as TRUNCATE did, and be all or nothing at every stage
(the stages are the ones the module docstring lists: load, index builds, swap). The tests are
transactional because the staged path commits on several connections; the cases are the
importer's own (mini MIMIC extract of ``tests.ehr.mimic_files``, bad rows as in test_importer).
"""

from pathlib import Path

import pytest
from django.db import connection, transaction

from ehr.importer import import_mimic_directory, parallel_copy, source, staging
from ehr.mimic_tables import TABLES
from ehr.models import DischargeNote
from tests.ehr import mimic_files as mf
from tests.ehr.test_importer import lab_row, lab_text, note_rows

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the staged load is PostgreSQL only"),
]

LAB = "mimic_labevents"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "mimic"
    mf.cohort(path)
    return path


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every raw-path file goes over parallel COPY streams, in blocks of a few records each."""
    monkeypatch.setattr(parallel_copy, "MIN_FILE_BYTES", 0)
    monkeypatch.setattr(source, "CHUNK_SIZE", 64)


def run(root: Path, mode: str = "fast", **kwargs: object):
    kwargs.setdefault("rejects_dir", root.parent / "rejects")
    return import_mimic_directory(root=root, allow_fast_path=mode == "fast", **kwargs)


def snapshot(table: str) -> tuple[list, list, list]:
    """Rows (file columns, so identity ids aside), index definitions and constraints of a live table."""
    spec = next(s for s in TABLES.values() if s.db_table == table)
    columns = ", ".join(f'"{c}"' for c in spec.columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {table} ORDER BY {columns}")
        rows = cursor.fetchall()
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = %s ORDER BY 1",
            [table],
        )
        indexes = cursor.fetchall()
        cursor.execute(
            "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = %s::regclass ORDER BY 1",
            [table],
        )
        constraints = cursor.fetchall()
    return rows, indexes, constraints


def staging_tables() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = %s",
            [staging.STAGING_SCHEMA],
        )
        return [name for (name,) in cursor.fetchall()]


def ids(table: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} ORDER BY id")
        return [i for (i,) in cursor.fetchall()]


# --- same result as the single-transaction load -------------------------------------------------


@pytest.mark.parametrize("mode", ["fast", "rows", "parallel"])
def test_staged_load_leaves_the_same_rows_indexes_and_constraints(
    root: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = [spec.db_table for spec in TABLES.values()]
    if mode == "parallel":
        # Multi-line quoted notes, empty fields, "___" and quotes cut into 64-byte chunks over the streams.
        monkeypatch.setattr(parallel_copy, "MIN_FILE_BYTES", 0)
        monkeypatch.setattr(source, "CHUNK_SIZE", 64)
        mode = "fast"
    staged = run(root, mode)
    assert staged.ok, staged.failed and staged.failed.error
    lab = next(t for t in staged.tables if t.name == "labevents")
    assert set(lab.index_seconds) == {
        "mimic_labevents_pkey",
        "lab_hadm_item_time",
        "lab_subject_item_time",
        "lab_subject_time",
    }
    after_staged = {table: snapshot(table) for table in tables}

    monkeypatch.undo()
    with transaction.atomic():  # the caller's transaction: the single-transaction path
        in_place = run(root, mode)
    assert in_place.ok
    assert all(not t.index_seconds for t in in_place.tables)

    assert {table: snapshot(table) for table in tables} == after_staged
    assert after_staged[LAB][0] and len(after_staged[LAB][1]) == 4
    assert staging_tables() == []


def test_identity_numbering_carries_on_as_after_truncate(root: Path) -> None:
    assert run(root, tables=["diagnoses_icd"]).ok
    first = ids("mimic_diagnoses_icd")

    assert run(root, tables=["diagnoses_icd"]).ok
    second = ids("mimic_diagnoses_icd")

    assert len(second) == len(first) == 3
    assert min(second) > max(first)
    # A later subject import inserts after them, not onto them (the sequence went on with the rows).
    assert run(root, tables=["diagnoses_icd"], subjects={10000032}).ok


def test_composite_unique_key_duplicate_is_found_by_its_parallel_build(root: Path) -> None:
    rows = mf.d_icd_diagnoses()
    rows.append({**rows[0], "long_title": "again"})
    path = mf.write_table(root, "d_icd_diagnoses", rows)
    report = run(root, tables=["d_icd_diagnoses"])

    assert report.failed.error == f"{path}:5: duplicate key (icd_code, icd_version)=(5849, 9), first on line 2"
    assert staging_tables() == []


# --- all or nothing at each stage ----------------------------------------------------------------


def test_failure_while_loading_leaves_the_previous_rows(root: Path) -> None:
    assert run(root).ok
    before = snapshot(LAB)
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2, valuenum="x")]))

    report = run(root, tables=["labevents"])

    assert report.failed.error == f"{path}:3: bad float (column valuenum, value 'x')"
    assert snapshot(LAB) == before
    assert staging_tables() == []


def test_implausible_value_is_refused_by_the_staging_check_and_named(root: Path) -> None:
    assert run(root).ok
    before = snapshot(LAB)
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2, charttime="2999-01-01 00:00:00")]))
    notes: list[str] = []

    report = run(root, tables=["labevents"], echo=notes.append)

    assert report.failed.error.startswith(f"{path}:3: implausible date"), report.failed.error
    assert any("implausible values: using the validated path" in n for n in notes)
    assert snapshot(LAB) == before


def test_duplicate_key_found_while_indexing_leaves_the_previous_rows(root: Path) -> None:
    assert run(root).ok
    before = snapshot(LAB)
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2), lab_row(1)]))

    report = run(root, tables=["labevents"])

    assert report.failed.error == f"{path}:4: duplicate key (labevent_id)=(1), first on line 2"
    assert snapshot(LAB) == before
    assert staging_tables() == []


def test_failing_index_build_cancels_the_others_and_leaves_the_previous_rows(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(root).ok
    before = snapshot(LAB)
    real_plan = staging.plan_staging

    def plan_with_a_broken_index(**kwargs: object) -> staging.StagingPlan:
        plan = real_plan(**kwargs)
        broken = staging.IndexJob(
            name="lab_subject_time", create_sql=f"CREATE INDEX lab_subject_time ON {plan.staging} (no_such_column)"
        )
        jobs = [broken if job.name == "lab_subject_time" else job for job in plan.jobs]
        return staging.StagingPlan(
            live_schema=plan.live_schema,
            table=plan.table,
            live=plan.live,
            jobs=jobs,
            identity_columns=plan.identity_columns,
        )

    monkeypatch.setattr(staging, "plan_staging", plan_with_a_broken_index)
    mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2)]))

    report = run(root, tables=["labevents"])

    assert "database error" in report.failed.error and "no_such_column" in report.failed.error
    assert snapshot(LAB) == before
    assert staging_tables() == []
    monkeypatch.undo()
    assert run(root, tables=["labevents"]).ok  # the table's import lock was released
    assert snapshot(LAB)[0] != before[0]


def test_failure_inside_the_swap_leaves_the_previous_rows(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A view created on the table while its indexes are built makes the swap's DROP TABLE fail mid-transaction."""
    assert run(root).ok
    before = snapshot(LAB)
    real_build = staging.build_indexes

    def build_then_add_a_view(**kwargs: object) -> dict[str, float]:
        seconds = real_build(**kwargs)
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE VIEW lab_view_during_import AS SELECT labevent_id FROM {LAB}")
        return seconds

    monkeypatch.setattr(staging, "build_indexes", build_then_add_a_view)
    mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2)]))
    try:
        report = run(root, tables=["labevents"])

        assert "database error" in report.failed.error and "depend" in report.failed.error
        assert snapshot(LAB) == before
        assert staging_tables() == []
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP VIEW IF EXISTS lab_view_during_import")


def test_interrupt_before_the_swap_leaves_the_previous_rows(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(root).ok
    before = snapshot(LAB)

    def interrupted(**_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(staging, "swap_in", interrupted)
    mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2)]))

    report = run(root, tables=["labevents"])

    assert report.failed.error.endswith(": interrupted")
    assert snapshot(LAB) == before
    assert staging_tables() == []


# --- left-overs and tables the staged load does not suit -------------------------------------------


def test_staging_table_left_by_a_killed_import_is_replaced(root: Path) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {staging.STAGING_SCHEMA}")
        cursor.execute(f"CREATE TABLE {staging.STAGING_SCHEMA}.{LAB} (junk int)")

    assert run(root, tables=["labevents"]).ok
    assert len(snapshot(LAB)[0]) == len(mf.labevents())
    assert staging_tables() == []


def test_table_with_a_view_is_loaded_in_one_transaction_with_a_note(root: Path) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE VIEW lab_view AS SELECT labevent_id FROM {LAB}")
    notes: list[str] = []
    try:
        report = run(root, tables=["labevents"], echo=notes.append)

        assert report.ok
        assert not report.tables[0].index_seconds
        assert "note: labevents: indexes rebuilt one by one in the load transaction (views on it)" in notes
        assert len(snapshot(LAB)[0]) == len(mf.labevents())
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP VIEW lab_view")


# --- parallel COPY streams -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "cut"),
    [
        (b"1,a\n2,b\n3,c", 8),  # the last complete record
        (b'1,"x\ny"\n2,"z', 8),  # a newline inside quotes is not a boundary; the open quote is not either
        (b'1,"say ""hi""\nmore"\n2', 20),  # doubled quotes toggle twice
        (b'1,"open\nstill open\n', 0),  # no record ends here yet
        (b"no newline", 0),
    ],
)
def test_record_boundaries_follow_postgresql_quote_toggling(data: bytes, cut: int) -> None:
    """Cases from PostgreSQL's CSV COPY rules: a quote toggles quoting, a doubled quote toggles twice."""
    assert parallel_copy.split_at_record_end(data) == cut


def test_parallel_streams_load_every_row_once(root: Path, small_blocks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [lab_row(n, comments=f'line "{n}"\nsecond line' if n % 3 == 0 else None) for n in range(1, 201)]
    mf.write_text(root, "hosp/labevents", lab_text(rows))
    results: list[int | None] = []
    real_copy = parallel_copy.copy_file_in_parallel

    def spy(**kwargs: object) -> int | None:
        results.append(real_copy(**kwargs))
        return results[-1]

    monkeypatch.setattr(parallel_copy, "copy_file_in_parallel", spy)

    report = run(root, tables=["labevents"])

    assert results == [200]  # loaded by the streams, not by the sequential fallback

    assert report.ok and report.tables[0].rows_loaded == 200 and report.tables[0].method == "copy-csv"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT labevent_id, comments FROM {LAB} ORDER BY labevent_id")
        loaded = cursor.fetchall()
    assert loaded == [(n, f'line "{n}"\nsecond line' if n % 3 == 0 else None) for n in range(1, 201)]
    assert staging_tables() == []


def test_parallel_streams_fall_back_for_an_end_marker_line(root: Path, small_blocks: None) -> None:
    rows = note_rows()
    rows[1]["text"] = "before\n\\.\nafter"
    mf.write_table(root, "discharge", rows)

    report = run(root, tables=["discharge"])

    assert report.ok, report.failed
    assert DischargeNote.objects.get(note_id="N-2").text == "before\n\\.\nafter"
    assert DischargeNote.objects.count() == 3


def test_parallel_streams_bad_row_late_in_the_file_is_named_as_sequentially(root: Path, small_blocks: None) -> None:
    assert run(root).ok
    before = snapshot(LAB)
    rows = [lab_row(n) for n in range(1, 101)]
    rows[89] = lab_row(90, valuenum="x")
    path = mf.write_text(root, "hosp/labevents", lab_text(rows))

    report = run(root, tables=["labevents"])

    assert report.failed.error == f"{path}:91: bad float (column valuenum, value 'x')"
    assert snapshot(LAB) == before
    assert staging_tables() == []


def test_parallel_streams_fall_back_for_a_decimal_integer(root: Path, small_blocks: None) -> None:
    rows = [lab_row(n) for n in range(1, 101)]
    rows[70] = lab_row(71, hadm_id="22595853.0")
    mf.write_text(root, "hosp/labevents", lab_text(rows))
    notes: list[str] = []

    report = run(root, tables=["labevents"], echo=notes.append)

    assert report.ok and report.tables[0].rows_loaded == 100
    assert report.tables[0].method == "copy-rows"
    assert any("written with a decimal point" in n for n in notes)
