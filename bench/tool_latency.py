"""Bench: ``Observation.search`` (admission + code) through ``execute_tool`` against raw SQL; the alias layer per tool.

    .venv/bin/python bench/tool_latency.py [--rows 10000000] [--calls 1000] [--warmup 200] [--reload]
    .venv/bin/python bench/tool_latency.py --per-tool [--calls 2000] [--warmup 200]
    .venv/bin/python bench/tool_latency.py --ehr-tools [--calls 1000] [--warmup 200] [--tool Condition.search]

1. Creates the PostgreSQL database ``physreview_bench_tools`` (server from ``DATABASE_URL``, else
   127.0.0.1:5432 user postgres) and migrates it.
2. Loads ``--rows`` labevents rows server-side (``INSERT ... SELECT ... generate_series``, secondary
   indexes dropped during the load and rebuilt after), plus d_labitems, patients and admissions.
   The load is cached: a marker table records the row count, and a rerun skips the load.
3. Times, over the same random (admission, lab name, current date) samples and alternating order:
   the tool call (argument validation, code resolution, query, FHIR Bundle) and the equivalent raw
   SQL through psycopg (same filters, join for the label, window count, LIMIT), rows fetched.
4. Prints p50/p95/p99 of both and the ratios (targets: tool p95 ≤ 2 × raw SQL p95 and ≤ 10 ms).

``--per-tool`` (see :mod:`bench.alias_cases`): what the argument alias layer adds, per tool, on the
demo cohort (imported once into ``physreview_bench_alias``): one call with the contract's argument
names against the same call written with alias names and placeholders (``patient``/``encounter``,
``test_name``, ``type: lab``, ``""``/``0`` for optional parameters …), alternating, same data, same
run. Both forms are checked to clean to the same arguments first. Prints p50 of each through
``execute_tool`` and the difference, plus the difference inside ``clean_arguments`` alone (the layer
without the query's noise). Target: ≤ 0.05 ms p50 added per call.

``--ehr-tools`` (see :mod:`bench.ehr_tools`): every EHR read tool beside its hand-written SQL, at full MIMIC
dictionary sizes and on a large patient (built once into ``physreview_bench_ehr``). Target: p95 ≤ 1.5 × raw SQL.
"""

import argparse
import datetime as dt
import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
BENCH_DB = "physreview_bench_tools"
ROWS_PER_ADMISSION = 100  # 20 lab items x 5 days
LABS = [
    (50912, "Creatinine", "mg/dL", 0.5, 1.2),
    (50971, "Potassium", "mEq/L", 3.3, 5.1),
    (50983, "Sodium", "mEq/L", 133, 145),
    (50902, "Chloride", "mEq/L", 96, 108),
    (50882, "Bicarbonate", "mEq/L", 22, 32),
    (50868, "Anion Gap", "mEq/L", 8, 20),
    (51006, "Urea Nitrogen", "mg/dL", 6, 20),
    (50931, "Glucose", "mg/dL", 70, 100),
    (50960, "Magnesium", "mg/dL", 1.6, 2.6),
    (50893, "Calcium, Total", "mg/dL", 8.4, 10.3),
    (51301, "White Blood Cells", "K/uL", 4, 11),
    (51222, "Hemoglobin", "g/dL", 12, 16),
    (51221, "Hematocrit", "%", 36, 48),
    (51265, "Platelet Count", "K/uL", 150, 440),
    (51237, "INR(PT)", None, 0.9, 1.1),
    (51274, "PT", "sec", 9.4, 12.5),
    (51275, "PTT", "sec", 25, 36.5),
    (50813, "Lactate", "mmol/L", 0.5, 2),
    (50862, "Albumin", "g/dL", 3.5, 5.2),
    (50885, "Bilirubin, Total", "mg/dL", 0, 1.5),
]
FILLER_ITEMS = 1500  # a real d_labitems has ~1,600 rows

RAW_SQL = """
SELECT l.labevent_id, l.subject_id, l.hadm_id, l.itemid, l.charttime, l.value, l.valuenum, l.valueuom,
       l.ref_range_lower, l.ref_range_upper, l.flag, l.comments, d.label, d.fluid, count(*) OVER ()
FROM mimic_labevents l JOIN mimic_d_labitems d ON d.itemid = l.itemid
WHERE l.subject_id = %s AND l.hadm_id = %s AND upper(d.label) = upper(%s) AND l.charttime < %s
ORDER BY l.charttime DESC, l.labevent_id DESC
LIMIT %s
"""


def server_url(db: str = BENCH_DB) -> str:
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql", "pgsql"):
        sys.exit(f"DATABASE_URL={url!r} is not PostgreSQL; this bench needs PostgreSQL.")
    return urlunsplit(parts._replace(scheme="postgresql", path="/" + db))


def create_database(url: str) -> None:
    import psycopg

    db = urlsplit(url).path.lstrip("/")
    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db]).fetchone():
            conn.execute(f'CREATE DATABASE "{db}"')
            print(f"created database {db}")


def step(message: str):
    print(f"  {message} ...", end="", flush=True)
    start = time.perf_counter()
    return lambda: print(f" {time.perf_counter() - start:.1f} s", flush=True)


def load(conn, rows: int, *, index_names: list[str]) -> None:
    """Server-side generation: nothing goes through Python but the SQL text. One transaction, so an
    interrupted load leaves the previous state (indexes included) and is simply redone next time."""
    conn.execute("CREATE TABLE IF NOT EXISTS bench_tool_latency_meta (rows bigint NOT NULL)")
    loaded = conn.execute("SELECT max(rows) FROM bench_tool_latency_meta").fetchone()[0]
    present = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'mimic_labevents'")}
    if loaded == rows and set(index_names) <= present:
        print(f"using cached load: {rows:,} labevents rows in {BENCH_DB}")
        return
    if not set(index_names) <= present:
        sys.exit(f"indexes {sorted(set(index_names) - present)} are missing: drop database {BENCH_DB} and rerun")
    with conn.transaction():
        _load(conn, rows)


def _load(conn, rows: int) -> None:
    admissions = rows // ROWS_PER_ADMISSION
    print(f"loading {rows:,} labevents rows, {admissions:,} admissions into {BENCH_DB}")
    conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
    conn.execute("SET LOCAL synchronous_commit = off")
    done = step("truncating")
    conn.execute(
        "TRUNCATE mimic_labevents, mimic_d_labitems, mimic_admissions, mimic_patients, bench_tool_latency_meta"
    )
    done()
    done = step("d_labitems")
    for itemid, label, *_ in LABS:
        conn.execute("INSERT INTO mimic_d_labitems VALUES (%s, %s, 'Blood', 'Chemistry')", [itemid, label])
    conn.execute(
        "INSERT INTO mimic_d_labitems SELECT 60000 + g, 'Bench item ' || g, 'Blood', 'Chemistry' "
        "FROM generate_series(1, %s) g",
        [FILLER_ITEMS],
    )
    done()
    done = step("patients and admissions")
    # Two admissions per five patients; admissions spread over ~20 years of shifted time.
    conn.execute(
        "INSERT INTO mimic_patients (subject_id, gender, anchor_age, anchor_year, anchor_year_group, dod) "
        "SELECT 10000000 + g, CASE WHEN g %% 2 = 0 THEN 'F' ELSE 'M' END, 20 + g %% 70, 2150, '2017 - 2019', NULL "
        "FROM generate_series(0, %s) g",
        [admissions * 2 // 5],
    )
    conn.execute(
        "INSERT INTO mimic_admissions (subject_id, hadm_id, admittime, dischtime, admission_type) "
        "SELECT 10000000 + h * 2 / 5, 20000000 + h, "
        "timestamptz '2150-01-01 00:00+00' + h * interval '97 minutes', "
        "timestamptz '2150-01-01 00:00+00' + h * interval '97 minutes' + interval '6 days', 'EW EMER.' "
        "FROM generate_series(0, %s) h",
        [admissions - 1],
    )
    done()
    indexes = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes "
        "WHERE tablename = 'mimic_labevents' AND indexdef NOT LIKE '%UNIQUE%'"
    ).fetchall()
    done = step(f"dropping {len(indexes)} secondary indexes")
    for name, _ in indexes:
        conn.execute(f'DROP INDEX "{name}"')
    done()
    items = "ARRAY[" + ",".join(str(i[0]) for i in LABS) + "]"
    lows = "ARRAY[" + ",".join(str(float(i[3])) for i in LABS) + "]"
    highs = "ARRAY[" + ",".join(str(float(i[4])) for i in LABS) + "]"
    units = "ARRAY[" + ",".join(f"'{i[2]}'" if i[2] else "NULL" for i in LABS) + "]::text[]"
    # Row g: admission h = g / 100, k = g % 100 → item k % 20 on day k / 20; one row in ten is outpatient
    # (no hadm_id). Values: a deterministic spread around the reference range.
    done = step("labevents (INSERT ... SELECT generate_series)")
    conn.execute(
        f"""
        INSERT INTO mimic_labevents (labevent_id, subject_id, hadm_id, specimen_id, itemid, charttime, storetime,
            value, valuenum, valueuom, ref_range_lower, ref_range_upper, flag, priority)
        SELECT g, 10000000 + h * 2 / 5, CASE WHEN g % 10 = 3 THEN NULL ELSE 20000000 + h END, g / 20,
               ({items})[k % 20 + 1], t, t + interval '2 hours', v::text, v, ({units})[k % 20 + 1],
               ({lows})[k % 20 + 1], ({highs})[k % 20 + 1],
               CASE WHEN v > ({highs})[k % 20 + 1] OR v < ({lows})[k % 20 + 1] THEN 'abnormal' END, 'ROUTINE'
        FROM (
            SELECT g, g / {ROWS_PER_ADMISSION} AS h, g % {ROWS_PER_ADMISSION} AS k,
                   timestamptz '2150-01-01 00:00+00' + (g / {ROWS_PER_ADMISSION}) * interval '97 minutes'
                       + (g % {ROWS_PER_ADMISSION} / 20) * interval '1 day' + (g % 20) * interval '3 minutes'
                       + interval '5 hours' AS t,
                   round(((({lows})[g % 20 + 1] + ({highs})[g % 20 + 1]) / 2
                          * (0.6 + ((g::bigint * 7919) % 1000) / 1250.0))::numeric, 2)::float8 AS v
            FROM generate_series(0, {rows - 1}) g
        ) s
        """
    )
    done()
    for name, definition in indexes:
        done = step(f"index {name}")
        conn.execute(definition)
        done()
    done = step("ANALYZE")
    conn.execute("ANALYZE mimic_labevents, mimic_d_labitems, mimic_admissions, mimic_patients")
    done()
    conn.execute("INSERT INTO bench_tool_latency_meta VALUES (%s)", [rows])


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reload", action="store_true", help="reload the data even if cached")
    parser.add_argument("--per-tool", action="store_true", help="alias-layer overhead per tool (demo cohort)")
    parser.add_argument("--ehr-tools", action="store_true", help="every EHR read tool against raw SQL (issue 37)")
    parser.add_argument("--tool", action="append", help="with --ehr-tools: only this tool (repeatable)")
    opts = parser.parse_args()
    if opts.ehr_tools:
        sys.path.insert(0, str(BASE_DIR))
        from bench.ehr_tools import EHR_DB, run_ehr_tools

        url = server_url(EHR_DB)
        create_database(url)
        run_ehr_tools(url=url, calls=opts.calls, warmup=opts.warmup, seed=opts.seed, only=opts.tool)
        return
    if opts.per_tool:
        sys.path.insert(0, str(BASE_DIR))
        from bench.alias_cases import ALIAS_DB, run_per_tool

        url = server_url(ALIAS_DB)
        create_database(url)
        run_per_tool(url=url, calls=opts.calls, warmup=opts.warmup)
        return

    url = server_url()
    create_database(url)
    os.environ["DATABASE_URL"] = url
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    import django

    django.setup()
    import psycopg
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from ehr.fhir import ToolContext, execute_tool
    from ehr.models import LabEvent

    call_command("migrate", verbosity=0)
    with psycopg.connect(url, autocommit=True) as conn:
        if opts.reload:
            conn.execute("DROP TABLE IF EXISTS bench_tool_latency_meta")
        load(conn, opts.rows, index_names=[i.name for i in LabEvent._meta.indexes])
        n_labs = conn.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'mimic_labevents'").fetchone()[0]
        admissions = conn.execute("SELECT hadm_id, subject_id, admittime FROM mimic_admissions").fetchall()
    print(f"labevents ≈ {n_labs:,} rows, {len(admissions):,} admissions")

    rng = random.Random(opts.seed)
    samples = []
    for _ in range(opts.warmup + opts.calls):
        hadm, subject, admittime = rng.choice(admissions)
        label = rng.choice(LABS)[1]
        # current date somewhere in the stay: some of the admission's results are still in the future. Not the
        # admission day itself: nothing of the current date is visible (the release's cutoff), the admission neither.
        current = (admittime + dt.timedelta(days=rng.randint(1, 6))).date()
        samples.append((hadm, subject, label.lower() if rng.random() < 0.5 else label, current))

    raw = psycopg.connect(url, autocommit=True)

    def run_tool(sample) -> dict:
        hadm, subject, label, current = sample
        args = {"subject_id": subject, "hadm_id": hadm, "category": "laboratory", "code": label, "_count": 50}
        return execute_tool(name="Observation.search", arguments=args, context=ToolContext(current_date=current))

    def run_raw(sample) -> list:
        hadm, subject, label, current = sample
        cutoff = ToolContext(current_date=current).cutoff
        return raw.execute(RAW_SQL, [subject, hadm, label, cutoff, 50]).fetchall()

    # Same answers (ids and order) on a few samples before timing anything.
    for sample in samples[:50]:
        tool_ids = [e["resource"]["id"] for e in run_tool(sample)["entry"]]
        raw_ids = [f"lab-{r[0]}" for r in run_raw(sample)]
        assert tool_ids == raw_ids, (sample, tool_ids, raw_ids)
    with CaptureQueriesContext(connection) as queries:
        run_tool(samples[0])
    print(f"tool call issues {len(queries)} SQL quer{'y' if len(queries) == 1 else 'ies'} when results exist")
    reset_queries()

    tool_ms, raw_ms, hits = [], [], []
    for i, sample in enumerate(samples):
        order = (run_tool, run_raw) if i % 2 == 0 else (run_raw, run_tool)
        timings = {}
        for fn in order:
            start = time.perf_counter()
            result = fn(sample)
            timings[fn] = (time.perf_counter() - start) * 1000
            if fn is run_raw:
                n = len(result)
        if i >= opts.warmup:
            tool_ms.append(timings[run_tool])
            raw_ms.append(timings[run_raw])
            hits.append(n)
    raw.close()

    print(
        f"\nObservation.search (admission + code), {opts.calls} calls after {opts.warmup} warm-up, "
        f"{statistics.mean(hits):.1f} rows per call on average"
    )
    print(f"{'':14}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'mean ms':>9}")
    for name, values in (("execute_tool", tool_ms), ("raw SQL", raw_ms)):
        print(
            f"{name:14}{percentile(values, 50):9.3f}{percentile(values, 95):9.3f}{percentile(values, 99):9.3f}"
            f"{statistics.mean(values):9.3f}"
        )
    p95_ratio = percentile(tool_ms, 95) / percentile(raw_ms, 95)
    print(
        f"ratio p50 {percentile(tool_ms, 50) / percentile(raw_ms, 50):.2f}x, p95 {p95_ratio:.2f}x "
        f"(target p95 ≤ 2x and ≤ 10 ms: {'met' if p95_ratio <= 2 and percentile(tool_ms, 95) <= 10 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
