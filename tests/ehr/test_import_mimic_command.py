"""``manage.py import_mimic``: argument handling, output and exit codes (the service is tested in test_importer)."""

import csv
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from ehr.mimic_tables import TABLES
from ehr.models import LabEvent, Patient
from tests.ehr import mimic_files as mf

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "mimic"
    mf.cohort(path)
    return path


def test_quiet_import_prints_nothing(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("import_mimic", str(root), "--quiet")

    out, err = capsys.readouterr()
    assert out == ""
    assert "note/radiology" in err  # notes about absent tables still go to stderr
    assert Patient.objects.count() == 3


def test_summary_table(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("import_mimic", str(root), "--tables", "patients", "labevents")

    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["table", "rows", "loaded", "rejected", "seconds", "how"]
    assert any(line.split()[:2] == ["labevents", "6"] for line in out.splitlines())
    assert "9 rows loaded, 0 rejected. committed: patients, labevents." in out


def test_subjects_accept_spaces_and_commas(root: Path) -> None:
    call_command("import_mimic", str(root), "--quiet")  # replace the demo cohort's rows with the extract's
    Patient.objects.all().delete()

    call_command("import_mimic", str(root), "--subjects", "10000032,10000033", "10000034", "--quiet")

    assert sorted(Patient.objects.values_list("subject_id", flat=True)) == list(mf.SUBJECTS)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--subjects", "12x"], "--subjects: '12x' is not a subject_id"),
        (["--tables", "labs", "patients"], "unknown table(s): labs"),
    ],
)
def test_bad_arguments_are_command_errors(root: Path, args: list[str], message: str) -> None:
    with pytest.raises(CommandError) as excinfo:
        call_command("import_mimic", str(root), *args, "--quiet")
    assert message in str(excinfo.value)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such directory"):
        call_command("import_mimic", str(tmp_path / "missing"), "--quiet")


def test_bad_row_fails_with_file_line_and_what_was_committed(root: Path) -> None:
    rows = mf.labevents()
    rows[1]["valuenum"] = "abc"
    path = mf.write_table(root, "labevents", rows)
    before = LabEvent.objects.count()

    with pytest.raises(CommandError) as excinfo:
        call_command("import_mimic", str(root), "--quiet")

    message = str(excinfo.value)
    assert message.startswith(f"{path}:3: bad float (column valuenum, value 'abc')")
    assert "labevents rolled back; committed: d_icd_diagnoses, d_labitems, patients" in message
    assert LabEvent.objects.count() == before


def test_skip_bad_rows_reports_rejects(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = mf.labevents()
    rows[1]["valuenum"] = "abc"
    mf.write_table(root, "labevents", rows)

    call_command("import_mimic", str(root), "--skip-bad-rows", "--rejects-dir", str(tmp_path / "rej"))

    out = capsys.readouterr().out
    assert f"labevents: 1 rejected row(s) in {tmp_path / 'rej' / 'labevents.rejects.csv'}" in out
    assert LabEvent.objects.count() == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/mimic"], "CommandError: /nonexistent/mimic: no such directory"),
        ([".", "--subjects", "abc"], "CommandError: --subjects: 'abc' is not a subject_id"),
    ],
)
def test_exit_code_and_no_traceback(args: list[str], message: str) -> None:
    # Argument errors are found before any database access, so the subprocess needs no test database.
    result = _manage("import_mimic", *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def _manage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        env={**os.environ, "PHYSREVIEW_VAR_DIR": str(settings.VAR_DIR)},
        timeout=60,
        check=False,
    )


def test_header_only_table_file_is_refused(root: Path) -> None:
    call_command("import_mimic", str(root), "--quiet")
    before = LabEvent.objects.count()
    path = mf.write_table(root, "labevents", [])  # the header, no row

    with pytest.raises(CommandError) as excinfo:
        call_command("import_mimic", str(root), "--quiet")

    message = str(excinfo.value)
    assert message.startswith(f"{path}: no rows (header only); importing it would delete every row of labevents")
    assert "pass --allow-empty" in message
    assert before > 0 and LabEvent.objects.count() == before


def test_header_only_table_file_with_allow_empty_empties_the_table(root: Path) -> None:
    call_command("import_mimic", str(root), "--quiet")
    mf.write_table(root, "labevents", [])

    call_command("import_mimic", str(root), "--allow-empty", "--quiet")

    assert LabEvent.objects.count() == 0 and Patient.objects.count() == 3


def test_header_only_table_exits_non_zero_without_traceback(tmp_path: Path) -> None:
    # The refusal comes before any database access, like the argument errors above.
    root = tmp_path / "mimic"
    path = mf.write_table(root, "labevents", [])

    result = _manage("import_mimic", str(root))

    assert result.returncode == 1
    assert f"CommandError: {path}: no rows (header only)" in result.stderr
    assert "Traceback" not in result.stderr


def test_per_patient_table_is_refused_only_when_every_file_is_header_only(tmp_path: Path) -> None:
    root = tmp_path / "release"
    labs = [r for r in mf.labevents() if r["subject_id"] == mf.SUBJECTS[0]]
    mf.per_patient_cohort(root, subjects=mf.SUBJECTS[:2], tables={"patients": mf.patients()[:2], "labevents": labs})
    header_only = mf.csv_text(TABLES["labevents"].columns, [])
    mf.write_patient_text(root, mf.SUBJECTS[1], "hosp_labevents", header_only)

    call_command("import_mimic", str(root), "--quiet")  # one patient without labs among others: fine

    assert set(LabEvent.objects.values_list("subject_id", flat=True)) == {mf.SUBJECTS[0]}
    mf.write_patient_text(root, mf.SUBJECTS[0], "hosp_labevents", header_only)
    with pytest.raises(CommandError, match="labevents: none of its 2 files has a row"):
        call_command("import_mimic", str(root), "--quiet")
    assert LabEvent.objects.count() == len(labs)


def release(tmp_path: Path) -> Path:
    """Two patients in the release's per-patient layout, pandas-written (hadm_id ``22595853.0``)."""
    root = tmp_path / "release"
    labs = [r for r in mf.labevents() if r["subject_id"] in mf.SUBJECTS[:2]]
    tables = {"patients": mf.patients()[:2], "labevents": labs}
    mf.per_patient_cohort(root, subjects=mf.SUBJECTS[:2], tables=tables)
    return root


def test_per_patient_layout_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("import_mimic", str(release(tmp_path)))

    out = capsys.readouterr().out
    assert any(line.split()[:2] == ["labevents", "5"] and line.endswith("(2 files)") for line in out.splitlines())
    assert "7 rows loaded, 0 rejected. committed: patients, labevents." in out


def test_fractional_id_fails_with_file_line_and_column(tmp_path: Path) -> None:
    root = release(tmp_path)
    path = root / "10000033" / "hosp_labevents.csv.csv.gz"
    text = gzip.decompress(path.read_bytes()).decode().replace("22841357.0", "22841357.5", 1)
    path.write_bytes(gzip.compress(text.encode()))
    before = LabEvent.objects.count()

    with pytest.raises(CommandError) as excinfo:
        call_command("import_mimic", str(root), "--quiet")

    message = str(excinfo.value)
    assert message.startswith(f"{path}:2: bad int (not a whole number) (column hadm_id, value '22841357.5')")
    assert "labevents rolled back; committed: patients" in message
    assert LabEvent.objects.count() == before


def test_mixed_layouts_exit_non_zero_without_traceback(tmp_path: Path) -> None:
    root = release(tmp_path)
    mf.write_table(root, "patients", mf.patients())  # hosp/patients.csv.gz next to the patient folders

    result = subprocess.run(
        [sys.executable, "manage.py", "import_mimic", str(root)],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        env={**os.environ, "PHYSREVIEW_VAR_DIR": str(settings.VAR_DIR)},
        timeout=60,
        check=False,
    )

    assert result.returncode == 1
    assert (
        f"CommandError: {root}: mixes the standard layout (hosp/patients.csv.gz) and the per-patient" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_rejects_file_escapes_formula_cells(root: Path, tmp_path: Path) -> None:
    """Issue 36 F7: a bad row's raw fields were written as live formulas (``=HYPERLINK(...)``)."""
    rows = mf.labevents()
    rows[1]["valuenum"] = "abc"
    rows[1]["value"] = '=HYPERLINK("http://evil.example/","open")'
    rows[1]["valueuom"] = "@SUM(1)"
    mf.write_table(root, "labevents", rows)

    call_command("import_mimic", str(root), "--skip-bad-rows", "--rejects-dir", str(tmp_path / "rej"), "--quiet")

    with open(tmp_path / "rej" / "labevents.rejects.csv", newline="", encoding="utf-8") as f:
        (reject,) = list(csv.DictReader(f))
    assert reject["value"] == '\'=HYPERLINK("http://evil.example/","open")' and reject["valueuom"] == "'@SUM(1)"
    assert reject["valuenum"] == "abc"


@pytest.mark.parametrize(
    ("table", "row", "column", "value", "reason"),
    [
        ("patients", 0, "anchor_age", -40, "implausible value (outside 0–130)"),
        ("patients", 0, "subject_id", -10000032, "implausible value (negative identifier)"),
        ("patients", 1, "dod", "2999-01-01", "implausible date (year outside 1800–2299)"),
        ("admissions", 0, "hadm_id", -22595853, "implausible value (negative identifier)"),
    ],
)
def test_implausible_values_are_refused_with_file_line_and_column(root, table, row, column, value, reason) -> None:
    """Issue 36 F11: negative identifiers, an age of -40 and a death in 2999 were imported as they stood."""
    rows = getattr(mf, table)()
    rows[row][column] = value
    path = mf.write_table(root, table, rows)
    with pytest.raises(CommandError) as excinfo:
        call_command("import_mimic", str(root), "--quiet")
    assert f"{path}:{row + 2}: {reason} (column {column}, value '{value}')" in str(excinfo.value)


def test_mimics_shifted_dates_are_plausible(root) -> None:
    rows = mf.patients()
    rows[1]["dod"] = "2210-12-31"
    mf.write_table(root, "patients", rows)
    call_command("import_mimic", str(root), "--quiet")
    assert str(Patient.objects.get(subject_id=rows[1]["subject_id"]).dod) == "2210-12-31"
