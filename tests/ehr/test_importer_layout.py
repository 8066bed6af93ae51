"""The importer on the release's per-patient layout and on pandas-written values (``22444183.0``, NDC zeros).

``mode`` runs both the raw COPY fast path and the validated row path (the same on SQLite), as in
test_importer.py.
"""

import csv
import gzip
from pathlib import Path

import pytest
from django.db import connection

from ehr.importer import ImportArgumentError, format_summary, import_mimic_directory
from ehr.importer.codes import normalise_ndc
from ehr.mimic_tables import TABLES
from ehr.models import LabEvent, Patient, Prescription
from tests.ehr import mimic_files as mf

pytestmark = pytest.mark.django_db

POSTGRES = connection.vendor == "postgresql"
TWO = (10000032, 10000033)
PATIENT_TABLES = {
    "patients": mf.patients,
    "admissions": mf.admissions,
    "labevents": mf.labevents,
    "microbiologyevents": mf.microbiologyevents,
    "diagnoses_icd": mf.diagnoses_icd,
    "prescriptions": mf.prescriptions,
    "discharge": mf.discharge,
}


@pytest.fixture(params=["fast", "rows"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def run(root: Path, mode: str = "fast", **kwargs: object):
    kwargs.setdefault("rejects_dir", root.parent / "rejects")
    return import_mimic_directory(root=root, allow_fast_path=mode == "fast", **kwargs)


def two_patients() -> dict[str, list[dict[str, object]]]:
    return {name: [r for r in rows() if r["subject_id"] in TWO] for name, rows in PATIENT_TABLES.items()}


def contents(tables: list[str]) -> dict[str, list[tuple]]:
    out = {}
    for name in tables:
        spec = TABLES[name]
        out[name] = sorted(spec.model.objects.values_list(*spec.columns), key=repr)
    return out


def entry(report, name: str):
    return next(t for t in report.tables if t.name == name)


def lab_file(root: Path, subject_id: int) -> Path:
    return root / str(subject_id) / "hosp_labevents.csv.csv.gz"


# --- per-patient layout ----------------------------------------------------------------------------


def test_per_patient_layout_loads_the_same_rows_as_the_standard_layout(tmp_path: Path, mode: str) -> None:
    tables = two_patients()
    standard = tmp_path / "standard"
    for name, rows in tables.items():
        mf.write_table(standard, name, rows)
    assert run(standard, mode).ok
    expected = contents(list(tables))

    split = tmp_path / "release"
    counts = mf.per_patient_cohort(split, subjects=TWO, tables=tables)
    # hadm_id has a gap, so pandas wrote floats; ndc became a number and lost its leading zeros.
    labs_text = gzip.decompress(lab_file(split, 10000032).read_bytes()).decode()
    assert "\n1,10000032,22595853.0," in labs_text and "\n2,10000032,,1,51006," in labs_text
    rx_text = gzip.decompress((split / "10000032" / "hosp_prescriptions.csv.csv.gz").read_bytes()).decode()
    assert ",409176230.0," in rx_text and ",0.0," in rx_text
    messages: list[str] = []

    report = run(split, mode, echo=messages.append)

    assert report.ok, report.failed
    assert contents(list(tables)) == expected
    assert report.rows_by_table() == counts
    labs = entry(report, "labevents")
    assert labs.files == [lab_file(split, 10000032), lab_file(split, 10000033)]
    assert "(2 files)" in format_summary(report)
    if POSTGRES and mode == "fast":
        # Files PostgreSQL's integer input refuses go the validated path; the others stay raw.
        assert labs.method == "copy-rows"
        assert entry(report, "patients").method == "copy-csv"
        # hospital_expire_flag is empty in the first patient's file and "1.0" in the second's.
        assert entry(report, "admissions").method == "copy-csv+copy-rows"
        assert any(
            m.startswith(f"note: {lab_file(split, 10000032)}: integer column hadm_id written with a decimal point")
            for m in messages
        )
        assert "note: labevents: the same in 1 more file(s): integer column hadm_id" in "\n".join(messages)
    ndc = dict(Prescription.objects.values_list("pharmacy_id", "ndc"))
    assert ndc == {100: "00409176230", 101: "0", 102: "51079025520", 103: None}


def test_fractional_value_stops_the_table_and_loads_nothing_of_it(tmp_path: Path, mode: str) -> None:
    tables = two_patients()
    tables["labevents"][-1]["hadm_id"] = "22841357.5"  # labevent 5: line 3 of the second patient's file
    mf.per_patient_cohort(tmp_path / "release", subjects=TWO, tables=tables)
    before = LabEvent.objects.count()

    report = run(tmp_path / "release", mode)

    path = lab_file(tmp_path / "release", 10000033)
    assert report.failed.name == "labevents"
    assert report.failed.error == f"{path}:3: bad int (not a whole number) (column hadm_id, value '22841357.5')"
    # The first patient's file was loaded in the same transaction: rolled back with the rest.
    assert LabEvent.objects.count() == before
    assert "patients" in report.names("loaded") and "prescriptions" in report.names("not_run")


def test_duplicate_key_across_patient_files_names_both(tmp_path: Path, mode: str) -> None:
    tables = {"labevents": two_patients()["labevents"]}
    tables["labevents"][-1]["labevent_id"] = 1  # the first patient's first row has labevent_id 1
    root = tmp_path / "release"
    mf.per_patient_cohort(root, subjects=TWO, tables=tables)

    report = run(root, mode)

    second = lab_file(root, 10000033)
    if POSTGRES:
        assert report.failed.error == (
            f"{second}:3: duplicate key (labevent_id)=(1), first on {lab_file(root, 10000032)}:2"
        )
    else:
        assert report.failed.error.startswith(f"{second}:3: rejected by the database: UNIQUE constraint failed")


def test_patient_file_endings_and_what_is_ignored(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "release"
    header = TABLES["patients"].columns
    rows = mf.patients()
    for row, suffix in zip(rows, (".csv.csv.gz", ".csv.gz", ".csv"), strict=True):
        mf.write_patient_text(root, row["subject_id"], "hosp_patients", mf.pandas_text(header, [row]), suffix=suffix)
    # A second ending in the first folder loses to .csv.csv.gz; unknown files and hidden entries are ignored.
    loser = mf.write_patient_text(root, 10000032, "hosp_patients", "not,read\n", suffix=".csv")
    mf.write_patient_text(root, 10000032, "ed_edstays", "subject_id\n10000032\n")
    (root / ".cache").mkdir()
    (root / "README.txt").write_text("release notes")
    messages: list[str] = []

    report = run(root, mode, echo=messages.append)

    assert report.ok, report.failed
    assert sorted(Patient.objects.values_list("subject_id", flat=True)) == [r["subject_id"] for r in rows]
    assert f"warning: {loser} ignored, hosp_patients.csv.csv.gz is imported instead" in messages
    assert any("not tables PhysReview reads: ed_edstays.csv.csv.gz" in m for m in messages)
    assert any("hosp_labevents.csv.csv.gz / .csv.gz / .csv in the patient folders" in m for m in messages)
    assert "labevents" in report.names("absent")


def test_subjects_read_only_their_folders(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "release"
    mf.per_patient_cohort(root, subjects=TWO, tables={"labevents": two_patients()["labevents"]})
    assert run(root, mode).ok  # replace the demo cohort's rows with the extract's
    lab_file(root, 10000033).write_bytes(b"not gzip")  # never opened
    others = list(LabEvent.objects.exclude(subject_id=10000032).order_by("labevent_id").values_list())

    report = run(root, mode, subjects={10000032, 10000099})

    assert report.ok, report.failed
    assert sorted(LabEvent.objects.filter(subject_id=10000032).values_list("labevent_id", flat=True)) == [1, 2, 3]
    assert list(LabEvent.objects.exclude(subject_id=10000032).order_by("labevent_id").values_list()) == others
    assert entry(report, "labevents").files == [lab_file(root, 10000032)]


def test_repeated_header_warnings_are_told_once(tmp_path: Path) -> None:
    root = tmp_path / "release"
    rows = two_patients()["patients"]
    header = ["", *TABLES["patients"].columns]  # pandas' to_csv with its index: an unnamed first column
    for subject_id in TWO:
        mine = [{"": 0, **r} for r in rows if r["subject_id"] == subject_id]
        mf.write_patient_text(root, subject_id, "hosp_patients", mf.pandas_text(header, mine))
    messages: list[str] = []

    report = run(root, echo=messages.append)

    assert report.ok, report.failed
    first = root / "10000032" / "hosp_patients.csv.csv.gz"
    assert [m for m in messages if "(unnamed)" in m] == [
        f"warning: {first}: ignoring unknown column(s): (unnamed)",
        "warning: patients: the same in 1 more file(s): ignoring unknown column(s): (unnamed)",
    ]


def test_skip_bad_rows_writes_one_rejects_file_per_patient_file(tmp_path: Path) -> None:
    tables = {"labevents": two_patients()["labevents"]}
    tables["labevents"][0]["valuenum"] = "abc"
    tables["labevents"][-1]["valuenum"] = "def"
    root = tmp_path / "release"
    mf.per_patient_cohort(root, subjects=TWO, tables=tables)
    rejects_dir = tmp_path / "rejects"
    rejects_dir.mkdir()
    (rejects_dir / "labevents.10000034.rejects.csv").write_text("stale\n")

    report = run(root, skip_bad_rows=True, rejects_dir=rejects_dir)

    assert report.ok, report.failed
    labs = entry(report, "labevents")
    assert (labs.rows_loaded, labs.rows_rejected) == (3, 2)
    assert labs.rejects_files == [
        rejects_dir / "labevents.10000032.rejects.csv",
        rejects_dir / "labevents.10000033.rejects.csv",
    ]
    assert sorted(p.name for p in rejects_dir.iterdir()) == [p.name for p in labs.rejects_files]
    with labs.rejects_files[1].open(newline="") as f:
        rejected = list(csv.reader(f))
    assert rejected[1][:2] == ["3", "bad float (column valuenum, value 'def')"]


def test_progress_bar_spans_the_files_of_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "release"
    mf.per_patient_cohort(root, subjects=TWO, tables={"labevents": two_patients()["labevents"]})
    total = sum(lab_file(root, s).stat().st_size for s in TWO)

    assert run(root, progress=True).ok

    err = capsys.readouterr().err
    assert f"labevents: 100%|██████████| {total}/{total}" in err
    assert err.count("labevents:   0%") == 1  # one bar, not one per file


# --- layout rules ----------------------------------------------------------------------------------


def test_a_root_mixing_both_layouts_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    mf.write_table(root, "patients", mf.patients())
    mf.per_patient_cohort(root, subjects=TWO, tables={"labevents": two_patients()["labevents"]})

    with pytest.raises(ImportArgumentError) as excinfo:
        run(root)

    assert str(excinfo.value) == (
        f"{root}: mixes the standard layout (hosp/patients.csv.gz) and the per-patient layout "
        "(10000032/hosp_labevents.csv.csv.gz); import each from its own folder"
    )


def test_a_folder_not_named_by_a_subject_id_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "release"
    mf.per_patient_cohort(root, subjects=TWO, tables={"labevents": two_patients()["labevents"]})
    (root / "10000034_old").mkdir()

    with pytest.raises(ImportArgumentError, match=r"10000034_old/ not a patient folder"):
        run(root)


# --- pandas-written values in the standard layout ----------------------------------------------------


def test_integral_decimals_load_as_integers(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "mimic"
    mf.cohort(root)
    assert run(root, mode).ok
    expected = contents(list(mf.COHORT))
    for name, rows in mf.COHORT.items():
        mf.write_text(root, TABLES[name].path, mf.pandas_text(TABLES[name].columns, rows()))

    report = run(root, mode)

    assert report.ok, report.failed
    assert contents(list(mf.COHORT)) == expected


def test_a_decimal_late_in_the_file_still_loads_every_row_once(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "mimic"
    rows = [{**mf.labevents()[0], "labevent_id": i} for i in range(1, 3001)]
    rows[-1]["hadm_id"] = "22595853.0"
    mf.write_table(root, "labevents", rows)
    messages: list[str] = []

    report = run(root, mode, echo=messages.append)

    assert report.ok, report.failed
    assert LabEvent.objects.count() == 3000 and set(LabEvent.objects.values_list("hadm_id", flat=True)) == {22595853}
    if POSTGRES and mode == "fast":
        assert entry(report, "labevents").method == "copy-rows"
        assert any("integer column hadm_id written with a decimal point" in m for m in messages)


def test_subjects_filter_reads_decimal_subject_ids(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "mimic"
    rows = mf.labevents()
    for row in rows:
        row["subject_id"] = f"{row['subject_id']}.0"
    mf.write_table(root, "labevents", mf.labevents())
    assert run(root, mode).ok  # replace the demo cohort's rows with the extract's
    mf.write_table(root, "labevents", rows)
    others = list(LabEvent.objects.exclude(subject_id=10000032).order_by("labevent_id").values_list())

    report = run(root, mode, subjects={10000032}, tables=["labevents"])

    assert report.ok, report.failed
    assert entry(report, "labevents").rows_loaded == 3
    assert sorted(LabEvent.objects.filter(subject_id=10000032).values_list("labevent_id", flat=True)) == [1, 2, 3]
    # Rows of other subjects ("10000033.0") are recognised as such and skipped.
    assert list(LabEvent.objects.exclude(subject_id=10000032).order_by("labevent_id").values_list()) == others


# --- NDC codes -------------------------------------------------------------------------------------

NDC_CASES = {
    "00409176230": "00409176230",  # as MIMIC writes it
    "409176230": "00409176230",  # pandas, column without empty fields
    "409176230.0": "00409176230",  # pandas, column with empty fields
    "409.": "00000000409",
    "0": "0",  # MIMIC's "no code"
    "0.0": "0",
    "000": "0",
    "00000000000": "00000000000",  # 11 digits: as written
    "123456789012.0": "123456789012",
    "0409-1762-30": "0409-1762-30",  # not digits: as written
    "409.5": "409.5",
    "": "",
}


@pytest.mark.parametrize(("raw", "stored"), NDC_CASES.items())
def test_normalise_ndc(raw: str, stored: str) -> None:
    assert normalise_ndc(raw) == stored
    assert normalise_ndc(stored) == stored  # idempotent: re-importing changes nothing


def test_ndc_rule_is_the_same_on_both_paths(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "mimic"
    base = mf.prescriptions()[0]
    rows = [{**base, "pharmacy_id": i, "ndc": raw or None} for i, raw in enumerate(NDC_CASES)]
    mf.write_table(root, "prescriptions", rows)

    report = run(root, mode)

    assert report.ok, report.failed
    # The raw path (PostgreSQL) repairs after COPY, in SQL; the validated path per value, in Python.
    assert entry(report, "prescriptions").method == (
        "insert" if not POSTGRES else f"copy-{'csv' if mode == 'fast' else 'rows'}"
    )
    stored = dict(Prescription.objects.values_list("pharmacy_id", "ndc"))
    assert stored == {i: (NDC_CASES[raw] or None) for i, raw in enumerate(NDC_CASES)}


def test_one_patient_folder_given_as_the_root_is_explained(tmp_path: Path) -> None:
    root = tmp_path / "release"
    mf.per_patient_cohort(root, subjects=TWO, tables={"labevents": two_patients()["labevents"]})

    with pytest.raises(ImportArgumentError, match=r"outside a <subject_id> folder: give the folder that contains"):
        run(root / "10000032")
