"""The memoised code resolver against the uncached SQL one, and when the memo is refreshed.

Runs on the suite's database (SQLite or PostgreSQL): the SQL resolver's case-insensitive
comparisons are the backend's own, so equality here is checked on both backends.
"""

from pathlib import Path

import pytest

from ehr import models as m
from ehr.fhir import codes
from ehr.importer import import_mimic_directory
from tests.ehr import mimic_files as mf
from tests.ehr.factories import DItemFactory, DLabItemFactory, OmrFactory

pytestmark = pytest.mark.django_db

# Look-alike labels the steps must keep apart (ids far from the demo cohort's).
LAB_ITEMS = [
    (95001, "pH", "Blood"),
    (95002, "pH", "Urine"),
    (95003, "Phosphate", "Blood"),
    (95004, "Glucose", "Blood"),
    (95005, "Glucose", "Urine"),
    (95006, "Glucose", "Pleural"),
    (95007, "Calcium, Total", "Blood"),
    (95008, "Calcium, Urine", "Urine"),
    (95009, "Free Calcium", "Blood"),
    (95010, "Creatinine, Serum (Test)", "Blood"),
    (95011, "INR(PT)", "Blood"),
    (95012, "% Hemoglobin A1c", "Blood"),
    (95013, "Troponin T", "Blood"),
    (95014, "Troponin I", "Blood"),
    (95015, "Ketone_Body 50%", "Urine"),
    (95016, "Glucose Blood POC", "BLOOD"),
    (95017, "pH (Venous)", None),
    (95018, None, "Blood"),
    (95019, "a.b", "Blood"),
    (95020, "axb", "Blood"),
]
VITAL_ITEMS = [
    (95101, "Heart Rate Alarm - High", "Alarms"),
    (95102, "Arterial Blood Pressure systolic", "Routine Vital Signs"),
    (95103, "Temperature Celsius", "Routine Vital Signs"),
    (95104, "GCS - Eye Opening", "Neurological"),
    (95105, "O2 saturation pulseoxymetry", "Respiratory"),
    (95106, "Daily Weight", "General"),
]
CODES = [
    "ph",
    "PH",
    "pH",
    " ph ",
    "abg ph",
    "phos",
    "phosphate",
    "phosphorus",
    "glucose",
    "Glucose",
    "GLUCOSE",
    "urine glucose",
    "glucose (urine)",
    "glucose, urine",
    "blood glucose",
    "pleural glucose",
    "csf glucose",
    "glucose poc",
    "gluc",
    "calcium",
    "Calcium, Total",
    "calcium total",
    "ca",
    "free calcium",
    "creatinine",
    "creatinine, potassium",
    "creatinine, xyzzy",
    "potassium,sodium , chloride",
    "creatinine,",
    ",",
    ",,",
    "inr",
    "INR(PT)",
    "inr(pt)",
    "(pt)",
    "pt",
    "% hemoglobin",
    "%",
    "_",
    "50%",
    "ketone_body",
    "a.b",
    "a?b",
    ".",
    ".*",
    "[a-z]",
    "(",
    ")",
    "\\",
    "'",
    '"',
    "a|b",
    "x|ph",
    "mimic-iv/itemid|95001",
    "95001",
    "95018",
    "0095001",
    "50912",
    "220045",
    "999999999",
    "99999999999999999999999",
    "troponin",
    "trop",
    "troponin t",
    "heart rate",
    "hr",
    "heart",
    "rate",
    "blood pressure",
    "bp",
    "sbp",
    "map",
    "temp",
    "temperature",
    "celsius",
    "gcs",
    "o2",
    "spo2",
    "weight",
    "daily weight",
    "xyzzy",
    "",
    " ",
    "  a  ",
    "肌酐",
    "glucose 血",
]
NON_ASCII_CASED = ["ıron", "ſodium", "\u212a", "straße", "ǅ", "ﬁbrinogen", "Potassıum", "ph\n", "ph\u00a0"]


@pytest.fixture
def items() -> None:
    for itemid, label, fluid in LAB_ITEMS:
        DLabItemFactory(itemid=itemid, label=label, fluid=fluid)
    for itemid, label, category in VITAL_ITEMS:
        DItemFactory(itemid=itemid, label=label, category=category)


def sql_lab(code: str) -> codes.Resolved:
    return codes._resolve_sql(code=code, model=m.DLabItem, aliases=codes.LAB_ALIASES)


def sql_vital(code: str) -> codes.Resolved:
    return codes._resolve_sql(code=code, model=m.DItem, aliases=codes.VITAL_ALIASES)


@pytest.mark.parametrize("code", CODES)
def test_cached_resolution_equals_sql(items, code: str) -> None:
    assert codes.resolve_lab(code) == sql_lab(code)
    assert codes.resolve_vital(code) == sql_vital(code)
    assert codes.resolve_lab(code) == sql_lab(code)  # memoised answer too


def test_look_alike_labels_are_kept_apart(items) -> None:
    assert codes.resolve_lab("ph").itemids == (95001,)  # blood preferred, not Phosphate
    urine = codes.resolve_lab("urine glucose").itemids
    assert 95005 in urine and 95004 not in urine
    assert codes.resolve_lab("a.b").itemids == (95019,)  # "." is not a wildcard


def test_a_repeated_code_is_answered_from_the_memo(items, django_assert_num_queries) -> None:
    first = codes.resolve_lab("urine glucose")
    with django_assert_num_queries(0):
        assert codes.resolve_lab("urine glucose") == first


def test_every_label_resolves_like_sql(items) -> None:
    for label in m.DLabItem.objects.exclude(label=None).values_list("label", flat=True):
        for code in (label, label.lower(), label.upper(), label.split()[0], label[1:-1]):
            assert codes.resolve_lab(code) == sql_lab(code), code
    for label in m.DItem.objects.values_list("label", flat=True):
        for code in (label, label.lower(), label.split()[0]):
            assert codes.resolve_vital(code) == sql_vital(code), code


@pytest.mark.parametrize("code", NON_ASCII_CASED)
def test_codes_the_backends_fold_differently_resolve_like_sql(items, code: str) -> None:
    assert codes.resolve_lab(code) == sql_lab(code)
    assert codes.resolve_vital(code) == sql_vital(code)


def test_a_non_ascii_label_resolves_like_sql(items) -> None:
    DLabItemFactory(itemid=95030, label="Glucose µ", fluid="Blood")
    for code in ("glucose", "glucose µ", "GLUCOSE µ", "µ"):
        assert codes.resolve_lab(code) == sql_lab(code)


def test_copy_is_kept_until_cleared(items) -> None:
    assert codes.resolve_lab("zanamivir level").itemids == ()
    DLabItemFactory(itemid=95040, label="Zanamivir Level", fluid="Blood")
    assert codes.resolve_lab("zanamivir level").itemids == ()  # the cached copy
    codes.clear_cache()
    assert codes.resolve_lab("zanamivir level").itemids == (95040,)


def test_copy_expires_after_the_ttl(items, monkeypatch) -> None:
    assert codes.resolve_vital("bladder pressure").itemids == ()
    DItemFactory(itemid=95140, label="Bladder Pressure", category="Other")
    monkeypatch.setattr(codes, "CACHE_TTL_SECONDS", 0.0)
    assert codes.resolve_vital("bladder pressure").itemids == (95140,)


def test_omr_names_follow_the_copy(items) -> None:
    before = codes.omr_names()
    assert set(before) == set(m.Omr.objects.values_list("result_name", flat=True).distinct())
    OmrFactory(subject_id=95000001, result_name="Zz Test Measurement", result_value="1")
    assert codes.omr_names() == before
    codes.clear_cache()
    assert "Zz Test Measurement" in codes.omr_names()


def test_the_importer_clears_the_copy(items, tmp_path: Path) -> None:
    assert codes.resolve_lab("zanamivir level").itemids == ()
    root = tmp_path / "mimic"
    mf.write_table(root, "d_labitems", [{"itemid": 95050, "label": "Zanamivir Level", "fluid": "Blood"}])
    report = import_mimic_directory(root=root, tables=["d_labitems"], rejects_dir=tmp_path / "rejects")
    assert report.ok, report.outcome_line()
    assert codes.resolve_lab("zanamivir level").itemids == (95050,)
    assert codes.resolve_lab("ph").itemids == ()  # the import replaced the whole table


def test_a_load_overtaken_by_a_clear_is_not_kept(items, monkeypatch) -> None:
    """An import that commits while a copy is being loaded: that copy answers once, then is dropped."""
    load = codes._load

    def load_then_import():
        snap = load()
        codes.clear_cache()
        return snap

    monkeypatch.setattr(codes, "_load", load_then_import)
    assert codes.resolve_lab("ph").itemids == (95001,)
    assert codes._current is None


def test_an_expired_copy_answers_while_another_thread_reloads(items, monkeypatch) -> None:
    assert codes.resolve_lab("zanamivir level").itemids == ()
    DLabItemFactory(itemid=95060, label="Zanamivir Level", fluid="Blood")
    monkeypatch.setattr(codes, "CACHE_TTL_SECONDS", 0.0)
    with codes._lock:  # another thread is reloading
        assert codes.resolve_lab("zanamivir level").itemids == ()
    assert codes.resolve_lab("zanamivir level").itemids == (95060,)
