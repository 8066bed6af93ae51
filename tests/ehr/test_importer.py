"""The MIMIC-IV importer service on the database the suite runs on (SQLite or PostgreSQL).

Each test writes a small MIMIC-layout extract into tmp_path. The demo cohort is already in the
database (tests/conftest.py), so assertions are relative to it or to a table the test replaced.
``mode`` runs both the raw COPY fast path and the validated row path (the same on SQLite).
"""

import csv
import gzip
import re
import zlib
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from django.db import connection

from ehr.importer import ImportArgumentError, format_summary, import_mimic_directory
from ehr.mimic_tables import TABLES
from ehr.models import Admission, DiagnosisIcd, DischargeNote, DLabItem, LabEvent, MicrobiologyEvent, Patient
from ehr.tasks import MimicImportFailed, import_mimic_dir
from tests.ehr import mimic_files as mf

pytestmark = pytest.mark.django_db

POSTGRES = connection.vendor == "postgresql"
LAB_COLUMNS = TABLES["labevents"].columns


@pytest.fixture(params=["fast", "rows"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "mimic"
    mf.cohort(path)
    return path


def run(root: Path, mode: str = "fast", **kwargs: object):
    kwargs.setdefault("rejects_dir", root.parent / "rejects")
    return import_mimic_directory(root=root, allow_fast_path=mode == "fast", **kwargs)


def counts() -> dict[str, int]:
    return {name: spec.model.objects.count() for name, spec in TABLES.items()}


def lab_text(rows: list[list[object]], header: list[str] = LAB_COLUMNS) -> str:
    return mf.csv_text(header, rows)


def lab_row(labevent_id: object, **overrides: object) -> list[object]:
    row = {
        "labevent_id": labevent_id,
        "subject_id": 10000032,
        "hadm_id": 22595853,
        "specimen_id": 1,
        "itemid": 50912,
        "charttime": "2180-05-06 23:00:00",
        "value": "1.0",
        "valuenum": "1.0",
    }
    row.update(overrides)
    return [row.get(c) for c in LAB_COLUMNS]


def expected_method(mode: str) -> str:
    if not POSTGRES:
        return "insert"
    return "copy-csv" if mode == "fast" else "copy-rows"


# --- loading -----------------------------------------------------------------------------------


def test_imports_the_extract_and_notes_absent_tables(root: Path, mode: str) -> None:
    messages: list[str] = []
    report = run(root, mode, echo=messages.append)

    assert report.ok, report.failed
    now = counts()
    for table, rows in mf.COHORT.items():
        assert now[table] == len(rows()), table
    loaded = {t.name: t for t in report.tables if t.status == "loaded"}
    assert set(loaded) == set(mf.COHORT)
    assert {t.method for t in loaded.values()} == {expected_method(mode)}
    assert report.rows_by_table() == {name: len(rows()) for name, rows in mf.COHORT.items()}
    # The demo has no notes: absent tables are skipped with a note, not an error.
    assert "radiology" in report.names("absent")
    assert any("note/radiology" in m and "skipped" in m for m in messages)
    summary = format_summary(report)
    assert "labevents" in summary and "rows loaded" in summary


def test_values_of_what_real_files_contain(root: Path, mode: str) -> None:
    assert run(root, mode).ok

    no_hadm = LabEvent.objects.get(labevent_id=2)
    assert no_hadm.hadm_id is None
    assert no_hadm.value == "<0.1" and no_hadm.valuenum is None
    assert no_hadm.ref_range_lower is None and no_hadm.ref_range_upper is None
    assert LabEvent.objects.get(labevent_id=3).value == "NEG"
    assert LabEvent.objects.get(labevent_id=4).comments == "___"
    assert LabEvent.objects.get(labevent_id=5).storetime is None
    first = LabEvent.objects.get(labevent_id=1)
    assert first.valuenum == 1.2 and first.ref_range_upper == 1.1 and first.flag == "abnormal"
    # Naive MIMIC times are stored as UTC wall-clock times.
    assert first.charttime == datetime(2180, 5, 6, 23, 0, tzinfo=UTC)
    assert Admission.objects.get(hadm_id=23000001).admittime == datetime(2160, 1, 1, tzinfo=UTC)
    assert Patient.objects.get(subject_id=10000032).dod is None
    assert Patient.objects.get(subject_id=10000033).dod == date(2152, 3, 4)
    assert set(DiagnosisIcd.objects.values_list("icd_version", flat=True)) == {9, 10}
    assert MicrobiologyEvent.objects.get(microevent_id=1).hadm_id is None
    assert DLabItem.objects.filter(label="pH").count() == 2
    assert DischargeNote.objects.get(note_id="10000032-DS-1").text == mf.NOTE_TEXT


def test_plain_csv_and_gz_mixed(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "mimic"
    mf.cohort(root, gz=False)
    mf.write_table(root, "labevents", mf.labevents(), gz=True)
    assert (root / "hosp" / "patients.csv").exists() and (root / "hosp" / "labevents.csv.gz").exists()

    report = run(root, mode)

    assert report.ok, report.failed
    assert counts()["patients"] == 3 and counts()["labevents"] == 6
    assert DischargeNote.objects.get(note_id="10000032-DS-1").text == mf.NOTE_TEXT


def test_reimport_is_idempotent(root: Path, mode: str) -> None:
    assert run(root, mode).ok
    first = counts()
    labs = list(LabEvent.objects.order_by("labevent_id").values_list())

    assert run(root, mode).ok

    assert counts() == first
    assert list(LabEvent.objects.order_by("labevent_id").values_list()) == labs


def test_both_paths_store_the_same_rows(root: Path) -> None:
    assert run(root, "fast").ok
    fast = {name: sorted(spec.model.objects.values_list(*spec.columns), key=repr) for name, spec in TABLES.items()}
    assert run(root, "rows").ok
    rows = {name: sorted(spec.model.objects.values_list(*spec.columns), key=repr) for name, spec in TABLES.items()}
    assert fast == rows


def test_subjects_replace_only_their_rows(root: Path, mode: str) -> None:
    assert run(root, mode).ok
    others_before = list(LabEvent.objects.exclude(subject_id=10000032).order_by("labevent_id").values_list())
    # A new extract: subject 10000032 has one lab row left, other subjects' rows changed too.
    mf.write_text(
        root,
        "hosp/labevents",
        lab_text([lab_row(1, value="9.9", valuenum="9.9"), lab_row(99, subject_id=10000033, value="new")]),
    )
    mf.write_table(root, "d_labitems", mf.d_labitems()[:2])

    report = run(root, mode, subjects={10000032})

    assert report.ok, report.failed
    assert list(LabEvent.objects.filter(subject_id=10000032).values_list("labevent_id", "value")) == [(1, "9.9")]
    assert list(LabEvent.objects.exclude(subject_id=10000032).order_by("labevent_id").values_list()) == others_before
    # Dictionary tables have no subject_id: loaded whole.
    assert DLabItem.objects.count() == 2
    assert Patient.objects.count() == 3
    entry = next(t for t in report.tables if t.name == "labevents")
    assert entry.rows_loaded == 1 and entry.method == ("copy-rows" if POSTGRES else "insert")


def test_tables_option_touches_only_those_tables(root: Path, mode: str) -> None:
    before = counts()

    report = run(root, mode, tables=["patients", "d_labitems"])

    assert [t.name for t in report.tables] == ["d_labitems", "patients"]
    after = counts()
    assert after["patients"] == 3 and after["d_labitems"] == 4
    assert {k: v for k, v in after.items() if k not in ("patients", "d_labitems")} == {
        k: v for k, v in before.items() if k not in ("patients", "d_labitems")
    }


def test_quoted_empty_field_is_null_too(root: Path, mode: str) -> None:
    text = lab_text([lab_row(1)]) + '2,10000032,"",1,50912,"",2180-05-06 23:00:00,,"",,,,,,,""\n'
    mf.write_text(root, "hosp/labevents", text)

    assert run(root, mode).ok
    lab = LabEvent.objects.get(labevent_id=2)
    assert (lab.hadm_id, lab.order_provider_id, lab.value, lab.comments) == (None, None, None, None)


def test_header_only_file_is_refused_before_anything_is_loaded(root: Path, mode: str) -> None:
    run(root, mode)
    before = counts()
    path = mf.write_text(root, "hosp/labevents", lab_text([]))
    mf.write_table(root, "patients", mf.patients()[:1])  # would be replaced first if the run started

    with pytest.raises(ImportArgumentError) as excinfo:
        run(root, mode)

    assert str(excinfo.value).splitlines() == [
        f"{path}: no rows (header only); importing it would delete every row of labevents",
        "nothing was imported; pass --allow-empty to import an empty table anyway",
    ]
    assert counts() == before


def test_header_only_file_empties_the_table_with_allow_empty(root: Path, mode: str) -> None:
    mf.write_text(root, "hosp/labevents", lab_text([]))

    report = run(root, mode, allow_empty=True)

    assert report.ok and LabEvent.objects.count() == 0
    assert report.rows_by_table()["labevents"] == 0


def test_header_only_file_with_subjects_names_their_rows(root: Path, mode: str) -> None:
    run(root, mode)
    before = LabEvent.objects.count()
    mf.write_text(root, "hosp/labevents", lab_text([]))

    with pytest.raises(ImportArgumentError, match="would delete the selected subjects' rows of labevents"):
        run(root, mode, subjects={mf.SUBJECTS[0]})

    assert LabEvent.objects.count() == before


def test_gz_wins_over_csv_with_a_warning(root: Path, mode: str) -> None:
    plain = root / "hosp" / "labevents.csv"
    plain.write_text(lab_text([lab_row(1)]))
    messages: list[str] = []

    report = run(root, mode, echo=messages.append)

    assert report.ok and LabEvent.objects.count() == 6
    assert f"warning: {plain} ignored, labevents.csv.gz is imported instead" in messages


def test_bad_arguments(tmp_path: Path, root: Path) -> None:
    with pytest.raises(ImportArgumentError, match="no such directory"):
        run(tmp_path / "nope")
    with pytest.raises(ImportArgumentError, match=r"unknown table\(s\): labs"):
        run(root, tables=["labs"])
    with pytest.raises(ImportArgumentError, match="subject list is empty"):
        run(root, subjects=set())
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportArgumentError, match="no MIMIC-IV table file"):
        run(tmp_path / "empty")


# --- headers -------------------------------------------------------------------------------------


def test_missing_required_columns_is_an_error_naming_them(root: Path, mode: str) -> None:
    header = [c for c in LAB_COLUMNS if c not in ("subject_id", "itemid")]
    path = mf.write_text(root, "hosp/labevents", mf.csv_text(header, [["1"] * len(header)]))
    before = counts()

    report = run(root, mode)

    assert not report.ok
    assert report.failed.name == "labevents"
    assert report.failed.error.startswith(f"{path}:1: header lacks required column(s): subject_id, itemid")
    assert counts()["labevents"] == before["labevents"]
    assert "patients" in report.names("loaded") and "microbiologyevents" in report.names("not_run")
    assert counts()["patients"] == 3


def test_unknown_extra_columns_are_ignored_with_a_warning(root: Path, mode: str) -> None:
    header = [*LAB_COLUMNS[:3], "fluid_extra", *LAB_COLUMNS[3:], "note_extra"]
    rows = [[*r[:3], "x", *r[3:], "y"] for r in (lab_row(1), lab_row(2, hadm_id=None))]
    mf.write_text(root, "hosp/labevents", mf.csv_text(header, rows))
    messages: list[str] = []

    report = run(root, mode, echo=messages.append)

    assert report.ok, report.failed
    entry = next(t for t in report.tables if t.name == "labevents")
    assert any("unknown column(s): fluid_extra, note_extra" in w for w in entry.warnings)
    assert any("fluid_extra, note_extra" in m for m in messages)
    assert LabEvent.objects.count() == 2 and LabEvent.objects.get(labevent_id=2).hadm_id is None


def test_missing_nullable_columns_load_as_null_with_a_warning(root: Path, mode: str) -> None:
    header = [c for c in LAB_COLUMNS if c not in ("comments", "flag")]
    mf.write_text(root, "hosp/labevents", mf.csv_text(header, [lab_row(1)[: len(header)]]))

    report = run(root, mode)

    assert report.ok, report.failed
    entry = next(t for t in report.tables if t.name == "labevents")
    assert any("not in file, loaded as NULL: flag, comments" in w for w in entry.warnings)
    lab = LabEvent.objects.get()
    assert lab.comments is None and lab.flag is None and lab.value == "1.0"


# --- bad rows ------------------------------------------------------------------------------------

BAD_LAB_ROWS = {
    "field count": (lab_row(3)[:-1], "wrong number of fields (expected 16, got 15)"),
    "bad int": (lab_row(3, subject_id="abc"), "bad int (column subject_id, value 'abc')"),
    "bad bigint": (lab_row("1e3"), "bad bigint (column labevent_id, value '1e3')"),
    "fractional int": (lab_row(3, hadm_id="22595853.5"), "bad int (not a whole number) (column hadm_id, value"),
    "fractional bigint": (lab_row("3.25"), "bad bigint (not a whole number) (column labevent_id, value '3.25')"),
    "int out of range": (lab_row(3, itemid="99999999999"), "int out of range (column itemid, value '99999999999')"),
    "bad float": (lab_row(3, valuenum="1.2.3"), "bad float (column valuenum, value '1.2.3')"),
    "bad datetime": (
        lab_row(3, charttime="2180-05-06 10h00"),
        "bad datetime (expected YYYY-MM-DD HH:MM:SS or YYYY-MM-DD) (column charttime, value '2180-05-06 10h00')",
    ),
    "impossible datetime": (
        lab_row(3, storetime="2180-02-30 10:00:00"),
        "bad datetime (no such date or time) (column storetime, value '2180-02-30 10:00:00')",
    ),
    "float out of range": (lab_row(3, valuenum="1e400"), "float out of range (column valuenum, value '1e400')"),
    "empty required": (lab_row(3, itemid=""), "empty required value (column itemid)"),
    "value too long": (lab_row(3, priority="STAT-STAT"), "value too long (9 > 7 characters) (column priority, value"),
}


@pytest.mark.parametrize("case", BAD_LAB_ROWS)
def test_bad_row_stops_the_table_with_file_and_line(root: Path, mode: str, case: str) -> None:
    bad, what = BAD_LAB_ROWS[case]
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2), bad, lab_row(4)]))
    before = counts()

    report = run(root, mode)

    assert not report.ok
    assert report.failed.name == "labevents"
    assert report.failed.error.startswith(f"{path}:4: {what}"), report.failed.error
    # Nothing of the failed table is committed; tables finished before it are; later ones are not run.
    assert counts()["labevents"] == before["labevents"]
    assert counts()["patients"] == 3 and "patients" in report.names("loaded")
    assert report.names("not_run") == [
        "microbiologyevents",
        "prescriptions",
        "emar",
        "omr",
        "icustays",
        "chartevents",
        "discharge",
        "radiology",
    ]
    assert "rolled back: labevents" in report.outcome_line()


def test_bad_date_in_a_date_column(root: Path, mode: str) -> None:
    rows = mf.patients()
    rows[2]["dod"] = "2152-13-01"
    path = mf.write_table(root, "patients", rows)

    report = run(root, mode)

    assert report.failed.error == f"{path}:4: bad date (no such date) (column dod, value '2152-13-01')"


def test_duplicate_primary_key_names_the_line(root: Path, mode: str) -> None:
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2), lab_row(1)]))
    before = counts()["labevents"]

    report = run(root, mode)

    # SQLite names the constraint, PostgreSQL the key (its constraint is re-added after the load).
    sqlite_message = f"{path}:4: rejected by the database: UNIQUE constraint failed: mimic_labevents.labevent_id"
    postgres_message = f"{path}:4: duplicate key (labevent_id)=(1), first on line 2"
    assert report.failed.error == (postgres_message if POSTGRES else sqlite_message)
    assert counts()["labevents"] == before


def note_rows() -> list[dict[str, object]]:
    base = {"subject_id": 10000032, "hadm_id": 22595853, "note_type": "DS", "charttime": "2180-05-07 00:00:00"}
    return [
        {**base, "note_id": "N-1", "note_seq": 1, "text": 'line one\nline two\n\nline four, "quoted"\n'},
        {**base, "note_id": "N-2", "note_seq": 2, "text": "one line"},
        {**base, "note_id": "N-3", "note_seq": 3, "text": "a\nb\nc"},
    ]


def test_multiline_notes_count_physical_lines(root: Path, mode: str) -> None:
    rows = note_rows()
    # Physical lines: header 1; N-1 spans 2-6; N-2 is 7; N-3 spans 8-10; the bad record starts at 11.
    rows.append({**rows[1], "note_id": "N-4", "note_seq": "x", "text": "bad\nrecord"})
    path = mf.write_table(root, "discharge", rows)

    report = run(root, mode)

    assert report.failed.error == f"{path}:11: bad smallint (column note_seq, value 'x')"


def test_bad_multiline_record_reports_its_first_line(root: Path, mode: str) -> None:
    rows = note_rows()
    rows[2]["charttime"] = "not a time"  # N-3 starts at line 8 and ends at line 10
    path = mf.write_table(root, "discharge", rows)

    report = run(root, mode)

    assert report.failed.error.startswith(f"{path}:8: bad datetime"), report.failed.error


def test_multiline_notes_load(root: Path, mode: str) -> None:
    mf.write_table(root, "discharge", note_rows(), gz=False)

    assert run(root, mode).ok
    assert DischargeNote.objects.get(note_id="N-1").text == note_rows()[0]["text"]
    assert DischargeNote.objects.count() == 3


def test_unterminated_quote_is_malformed_csv(root: Path, mode: str) -> None:
    text = lab_text([lab_row(1)]) + '2,10000032,,1,50912,,2180-05-06 23:00:00,,"open quote\n'
    path = mf.write_text(root, "hosp/labevents", text)

    report = run(root, mode)

    assert report.failed.error.startswith(f"{path}:3: malformed CSV"), report.failed.error


def truncated_copy(path: Path) -> int:
    """Cut a .csv.gz file short; returns the number of complete lines still decompressible."""
    data = path.read_bytes()
    cut = data[: len(data) * 2 // 3]
    path.write_bytes(cut)
    return zlib.decompressobj(wbits=31).decompress(cut).count(b"\n")


def test_truncated_gzip_rolls_the_table_back(root: Path, mode: str) -> None:
    rows = [lab_row(i, value=f"value {i} " + "x" * (i % 37)) for i in range(1, 3001)]
    path = mf.write_text(root, "hosp/labevents", lab_text(rows))
    complete_lines = truncated_copy(path)
    assert 10 < complete_lines < 3000
    before = counts()["labevents"]

    report = run(root, mode)

    assert report.failed.error == f"{path}: truncated gzip after line {complete_lines}"
    assert counts()["labevents"] == before
    assert "patients" in report.names("loaded")


def test_not_a_gzip_file(root: Path, mode: str) -> None:
    path = root / "hosp" / "labevents.csv.gz"
    path.write_bytes(b"labevent_id,subject_id\n1,2\n")

    report = run(root, mode)

    assert report.failed.error.startswith(f"{path}: not a gzip file")


# --- skipping bad rows -----------------------------------------------------------------------------


def test_skip_bad_rows_writes_rejects_and_continues(root: Path, tmp_path: Path) -> None:
    rows = [lab_row(1), lab_row(2, valuenum="NEG"), lab_row(3), lab_row(4, charttime=""), lab_row(5)[:3]]
    mf.write_text(root, "hosp/labevents", lab_text(rows))
    rejects_dir = tmp_path / "rejects_here"

    report = run(root, skip_bad_rows=True, rejects_dir=rejects_dir)

    assert report.ok, report.failed
    entry = next(t for t in report.tables if t.name == "labevents")
    assert (entry.rows_loaded, entry.rows_rejected) == (2, 3)
    assert sorted(LabEvent.objects.values_list("labevent_id", flat=True)) == [1, 3]
    assert entry.rejects_file == rejects_dir / "labevents.rejects.csv"
    with entry.rejects_file.open(newline="") as f:
        rejected = list(csv.reader(f))
    assert rejected[0] == ["line", "reason", *LAB_COLUMNS]
    assert [r[:2] for r in rejected[1:]] == [
        ["3", "bad float (column valuenum, value 'NEG')"],
        ["5", "empty required value (column charttime)"],
        ["6", "wrong number of fields (expected 16, got 3)"],
    ]
    assert rejected[1][2:] == ["" if v is None else str(v) for v in lab_row(2, valuenum="NEG")]
    # Tables without bad rows leave no rejects file behind.
    assert not (rejects_dir / "patients.rejects.csv").exists()


def test_skip_bad_rows_still_rolls_back_a_truncated_file(root: Path) -> None:
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(i) for i in range(1, 3001)]))
    complete_lines = truncated_copy(path)
    before = counts()["labevents"]

    report = run(root, skip_bad_rows=True)

    assert report.failed.error == f"{path}: truncated gzip after line {complete_lines}"
    assert counts()["labevents"] == before


# --- PostgreSQL specifics --------------------------------------------------------------------------


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL index handling")
def test_indexes_are_rebuilt_after_a_load_and_kept_after_a_failure(root: Path) -> None:
    def index_names() -> set[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'mimic_labevents'")
            return {name for (name,) in cursor.fetchall()}

    before = index_names()
    assert {"mimic_labevents_pkey", "lab_hadm_item_time", "lab_subject_item_time", "lab_subject_time"} <= before
    assert run(root).ok
    assert index_names() == before
    mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(2, valuenum="x")]))
    assert not run(root).ok
    assert index_names() == before


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL key constraints are re-added after the load")
def test_duplicate_composite_key_in_a_dictionary(root: Path, mode: str) -> None:
    rows = mf.d_icd_diagnoses()
    rows.append({**rows[0], "long_title": "again"})
    path = mf.write_table(root, "d_icd_diagnoses", rows)

    report = run(root, mode)

    assert report.failed.error == f"{path}:5: duplicate key (icd_code, icd_version)=(5849, 9), first on line 2"


def test_subjects_import_reports_a_duplicate_at_its_line(root: Path, mode: str) -> None:
    assert run(root, mode).ok  # replace the demo cohort's rows with the extract's
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1), lab_row(1)]))

    report = run(root, mode, subjects={10000032})

    assert report.failed.error.startswith(f"{path}:3: rejected by the database"), report.failed.error
    assert "labevent_id" in report.failed.error


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL COPY line counting")
def test_fast_path_maps_crlf_files_to_physical_lines(root: Path) -> None:
    rows = note_rows()
    rows.append({**rows[1], "note_id": "N-4", "note_seq": "x"})
    text = mf.csv_text(TABLES["discharge"].columns, [[r.get(c) for c in TABLES["discharge"].columns] for r in rows])
    path = mf.write_text(root, "note/discharge", text.replace("\n", "\r\n"))

    report = run(root, "fast")

    assert report.failed.error == f"{path}:11: bad smallint (column note_seq, value 'x')"


# --- Celery task -----------------------------------------------------------------------------------


def test_celery_task_returns_rows_per_table(root: Path) -> None:
    result = import_mimic_dir.apply(args=[str(root)], kwargs={"tables": ["patients", "labevents"]})

    assert result.get() == {"patients": 3, "labevents": 6}


def test_celery_task_fails_on_bad_input(root: Path) -> None:
    mf.write_text(root, "hosp/labevents", lab_text([lab_row(1, subject_id="x")]))

    # Eager execution (no broker in tests) propagates the task's exception.
    with pytest.raises(MimicImportFailed, match=r"labevents.csv.gz:2: bad int"):
        import_mimic_dir.apply(args=[str(root)], kwargs={"subjects": [10000032]}, throw=True).get()


def test_header_with_byte_order_mark(root: Path, mode: str) -> None:
    path = root / "hosp" / "patients.csv.gz"
    text = mf.csv_text(
        TABLES["patients"].columns, [[r.get(c) for c in TABLES["patients"].columns] for r in mf.patients()]
    )
    path.write_bytes(gzip.compress(("\ufeff" + text).encode()))

    assert run(root, mode).ok
    assert Patient.objects.count() == 3


def test_error_messages_name_the_file_relative_to_the_given_root(root: Path, mode: str) -> None:
    mf.write_text(root, "hosp/labevents", lab_text([lab_row(1, valuenum="abc")]))

    report = run(root, mode)

    assert re.fullmatch(
        r".*/mimic/hosp/labevents\.csv\.gz:2: bad float \(column valuenum, value 'abc'\)", report.failed.error
    )


def test_database_error_is_reported_not_raised(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from django.db import OperationalError

    from ehr.importer import loaders

    def broken(**_kwargs: object) -> None:
        raise OperationalError("database is locked")

    monkeypatch.setattr(loaders, "clear_table", broken)

    report = run(root, tables=["patients", "labevents"])

    assert report.failed.name == "patients"
    assert report.failed.error.endswith("patients.csv.gz: database error: database is locked")
    assert report.names("not_run") == ["labevents"]


def test_note_line_that_is_copy_end_marker_is_loaded(root: Path, mode: str) -> None:
    rows = note_rows()
    rows[1]["text"] = "before\n\\.\nafter"
    mf.write_table(root, "discharge", rows)

    report = run(root, mode)

    assert report.ok, report.failed
    assert DischargeNote.objects.get(note_id="N-2").text == "before\n\\.\nafter"
    assert DischargeNote.objects.count() == 3
    entry = next(t for t in report.tables if t.name == "discharge")
    assert entry.method == ("copy-rows" if POSTGRES else "insert")


def test_unquoted_end_marker_line_is_a_bad_row_not_the_end(root: Path, mode: str) -> None:
    second_row = lab_text([lab_row(2)]).split("\n", 1)[1]
    path = mf.write_text(root, "hosp/labevents", lab_text([lab_row(1)]) + "\\.\n" + second_row)

    report = run(root, mode)

    assert report.failed.error == f"{path}:3: wrong number of fields (expected 16, got 1)"


def test_invalid_utf8_is_reported(root: Path, mode: str) -> None:
    path = root / "hosp" / "labevents.csv.gz"
    data = lab_text([lab_row(1), lab_row(2, comments="@@")]).encode().replace(b"@@", b"\xff\xfe")
    path.write_bytes(gzip.compress(data))
    before = counts()["labevents"]

    report = run(root, mode)

    assert report.failed.error.startswith(f"{path}:3: not valid UTF-8 (byte ff at byte 64 of the line)"), (
        report.failed.error
    )
    assert counts()["labevents"] == before
