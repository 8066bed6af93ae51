"""Bench: ``import_mimic`` (the importer service) against ``psql \\copy`` of the same labevents file.

    .venv/bin/python bench/import_vs_copy.py [--rows 5000000] [--repeat 1] [--keep-db] [--indexed-baseline]

1. Generates a labevents-shaped ``.csv.gz`` (deterministic, cached under ``var/bench/``).
2. Creates the PostgreSQL database ``physreview_bench_import`` (server from ``DATABASE_URL``, else
   127.0.0.1:5432 user postgres) and migrates it.
3. Times, in the same run: ``gzip -dc FILE | psql -c "\\copy bare FROM STDIN (FORMAT csv, HEADER true)"``
   into a bare table (same column types, no index, no constraint), then the importer service into
   the real ``mimic_labevents`` table (from autocommit, so the staged load of
   :mod:`ehr.importer.staging`: COPY into a staging table, over parallel streams for this one
   large file, validation by PostgreSQL, ANALYZE, key and indexes built at once, swap).
   A CHECKPOINT before each timed run keeps one run's dirty pages out of the next one's time.
4. Prints both times, rows/s and the ratio (target: importer ≤ 1.3 × psql). ``--indexed-baseline``
   also times psql \\copy straight into the real table with its key and indexes kept in place.

The importer's own phases are printed too: the load, then the key and index builds (each build's
seconds) with the swap. Compare two versions by running them alternately, each with ``--repeat 1``.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
BENCH_DB = "physreview_bench_import"
BARE_TABLE = "bench_labevents_bare"
TARGET_RATIO = 1.3

ITEMS = [50912, 51006, 50971, 50983, 50902, 50882, 51221, 51222, 51265, 51301, 50931, 51491, 50820, 51237]
UNITS = ["mg/dL", "mg/dL", "mEq/L", "mEq/L", "mEq/L", "mEq/L", "%", "g/dL", "K/uL", "K/uL", "mg/dL", "", "units", ""]
TEXT_VALUES = ["<0.1", ">500", "NEG", "___", "TR", "HOLD.  SPECIMEN HEMOLYZED"]


def bench_file(rows: int) -> Path:
    """The cached labevents file with ``rows`` rows, generated on first use (gzip runs in parallel)."""
    from tqdm import tqdm

    path = BASE_DIR / "var" / "bench" / f"labevents_{rows}.csv.gz"
    if path.exists():
        print(f"using cached {path} ({path.stat().st_size / 2**20:.0f} MiB)")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    header = (
        "labevent_id,subject_id,hadm_id,specimen_id,itemid,order_provider_id,charttime,storetime,"
        "value,valuenum,valueuom,ref_range_lower,ref_range_upper,flag,priority,comments\n"
    )
    with tmp.open("wb") as out, tqdm(total=rows, desc="generating", unit="row", unit_scale=True) as bar:
        gz = subprocess.Popen(["gzip", "-6", "-n", "-c"], stdin=subprocess.PIPE, stdout=out)
        gz.stdin.write(header.encode())
        block = 100_000
        for start in range(1, rows + 1, block):
            lines = []
            for i in range(start, min(start + block, rows + 1)):
                # Arithmetic instead of random(): deterministic and fast; shapes follow real labevents.
                subject = 10000000 + (i // 180) % 60000
                hadm = "" if i % 7 == 0 else str(20000000 + (i // 60) % 400000)
                k = (i * 7) % len(ITEMS)
                day, minute = 1 + (i // 3000) % 28, (i * 13) % 1440
                year, month = 2110 + (i // 84000) % 90, 1 + (i // 7000) % 12
                chart = f"{year}-{month:02d}-{day:02d} {minute // 60:02d}:{minute % 60:02d}:00"
                store = "" if i % 11 == 0 else chart[:14] + f"{(minute % 60 + 7) % 60:02d}:00"
                if i % 13 == 0:
                    value, valuenum = TEXT_VALUES[i % len(TEXT_VALUES)], ""
                else:
                    valuenum = f"{(i * 37) % 2000 / 10:.1f}"
                    value = valuenum
                lower, upper = ("", "") if i % 5 == 0 else (f"{k * 1.5:.1f}", f"{k * 1.5 + 10:.1f}")
                flag = "abnormal" if i % 4 == 0 else ""
                priority = "STAT" if i % 3 == 0 else "ROUTINE"
                comments = "___" if i % 17 == 0 else ('"Verified, ""repeat"" analysis."' if i % 101 == 0 else "")
                provider = f"P{(i * 31) % 90000:05d}" if i % 2 else ""
                lines.append(
                    f"{i},{subject},{hadm},{i // 9 + 1},{ITEMS[k]},{provider},{chart},{store},"
                    f"{value},{valuenum},{UNITS[k]},{lower},{upper},{flag},{priority},{comments}\n"
                )
            gz.stdin.write("".join(lines).encode())
            bar.update(len(lines))
        gz.stdin.close()
        if gz.wait() != 0:
            sys.exit("gzip failed")
    tmp.rename(path)
    print(f"generated {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    return path


def server_url() -> str:
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql", "pgsql"):
        sys.exit(f"DATABASE_URL={url!r} is not PostgreSQL; this bench needs PostgreSQL")
    return url


def with_db(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def psql_args(url: str) -> list[str]:
    parts = urlsplit(url)
    args = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", parts.hostname or "127.0.0.1"]
    args += ["-p", str(parts.port or 5432), "-U", parts.username or "postgres", "-d", parts.path.lstrip("/")]
    return args


def psql(url: str, sql: str) -> str:
    env = {**os.environ, "PGPASSWORD": urlsplit(url).password or ""}
    return subprocess.run([*psql_args(url), "-Atc", sql], check=True, capture_output=True, text=True, env=env).stdout


def prepare_database(url: str) -> None:
    admin = with_db(url, "postgres")
    if not psql(admin, f"SELECT 1 FROM pg_database WHERE datname = '{BENCH_DB}'").strip():
        print(f"creating database {BENCH_DB}")
        psql(admin, f"CREATE DATABASE {BENCH_DB}")
    print(f"migrating {BENCH_DB}")
    env = {**os.environ, "DATABASE_URL": with_db(url, BENCH_DB)}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=BASE_DIR, env=env, check=True)
    bench = with_db(url, BENCH_DB)
    # Same column types as the real table, without NOT NULL, keys or indexes.
    columns = psql(
        bench,
        "SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) "
        "FROM pg_attribute WHERE attrelid = 'mimic_labevents'::regclass AND attnum > 0 AND NOT attisdropped",
    ).strip()
    psql(bench, f"DROP TABLE IF EXISTS {BARE_TABLE}; CREATE TABLE {BARE_TABLE} ({columns})")


def time_psql_copy(url: str, path: Path, table: str = BARE_TABLE) -> tuple[float, int]:
    psql(url, f"TRUNCATE {table}; CHECKPOINT")
    copy = f"\\copy {table} FROM STDIN WITH (FORMAT csv, HEADER true)"
    command = f"gzip -dc {shlex.quote(str(path))} | {shlex.join(psql_args(url))} -c {shlex.quote(copy)}"
    print("psql:", command)
    env = {**os.environ, "PGPASSWORD": urlsplit(url).password or ""}
    started = time.perf_counter()
    subprocess.run(["bash", "-o", "pipefail", "-c", command], check=True, env=env)
    seconds = time.perf_counter() - started
    rows = int(psql(url, f"SELECT count(*) FROM {table}"))
    psql(url, f"TRUNCATE {table}")  # free the space for the next run
    return seconds, rows


def time_importer(url: str, path: Path) -> tuple[float, int, str]:
    from ehr.importer import import_mimic_directory

    psql(url, "TRUNCATE mimic_labevents; CHECKPOINT")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "hosp").mkdir()
        (Path(tmp) / "hosp" / "labevents.csv.gz").symlink_to(path)
        print("importer: import_mimic_directory(tables=['labevents'])")
        started = time.perf_counter()
        report = import_mimic_directory(root=Path(tmp), tables=["labevents"], progress=True, echo=print)
        seconds = time.perf_counter() - started
    if not report.ok:
        sys.exit(f"import failed: {report.failed.error}")
    entry = report.tables[0]
    load = entry.seconds - entry.rebuild_seconds
    if entry.index_seconds:
        builds = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in entry.index_seconds.items())
        print(
            f"importer phases: COPY into staging + ANALYZE {load:.1f} s, "
            f"{len(entry.index_seconds)} index builds in parallel + swap {entry.rebuild_seconds:.1f} s ({builds})"
        )
    else:
        print(f"importer phases: TRUNCATE + COPY {load:.1f} s, key + index rebuild {entry.rebuild_seconds:.1f} s")
    return seconds, entry.rows_loaded, entry.method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=1, help="timed rounds (each: psql, then importer)")
    parser.add_argument("--keep-db", action="store_true", help="keep the loaded labevents table")
    parser.add_argument(
        "--indexed-baseline",
        action="store_true",
        help="also time psql \\copy straight into mimic_labevents with its key and indexes in place",
    )
    args = parser.parse_args()

    url = server_url()
    path = bench_file(args.rows)
    prepare_database(url)
    bench = with_db(url, BENCH_DB)
    os.environ["DATABASE_URL"] = bench
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()

    results = []
    for round_no in range(1, args.repeat + 1):
        print(f"--- round {round_no}/{args.repeat}")
        copy_s, copy_rows = time_psql_copy(bench, path)
        print(f"psql \\copy: {copy_rows:,} rows in {copy_s:.1f} s")
        imp_s, imp_rows, method = time_importer(bench, path)
        print(f"importer ({method}): {imp_rows:,} rows in {imp_s:.1f} s")
        if imp_rows != copy_rows:
            sys.exit(f"row counts differ: psql {copy_rows}, importer {imp_rows}")
        results.append((copy_s, imp_s, imp_rows))
        if args.indexed_baseline:
            indexed_s, _ = time_psql_copy(bench, path, table="mimic_labevents")
            print(
                f"psql \\copy into the indexed mimic_labevents: {indexed_s:.1f} s ({imp_rows / indexed_s:,.0f} rows/s)"
            )
    if not args.keep_db:
        psql(bench, "TRUNCATE mimic_labevents")

    print(f"\nlabevents-shaped file: {path.name}, {path.stat().st_size / 2**20:.0f} MiB compressed")
    copy_label = "psql \\copy s"
    print(f"{'round':>5}  {copy_label:>12}  {'rows/s':>10}  {'importer s':>10}  {'rows/s':>10}  {'ratio':>5}")
    for n, (copy_s, imp_s, rows) in enumerate(results, start=1):
        copy_rate, imp_rate = rows / copy_s, rows / imp_s
        print(
            f"{n:>5}  {copy_s:>12.1f}  {copy_rate:>10,.0f}  {imp_s:>10.1f}  {imp_rate:>10,.0f}  {imp_s / copy_s:>5.2f}"
        )
    # Ratio of the summed times: one noisy round neither hides nor fakes a regression.
    overall = sum(imp_s for _, imp_s, _ in results) / sum(copy_s for copy_s, _, _ in results)
    verdict = "meets" if overall <= TARGET_RATIO else "misses"
    rounds = f"{len(results)} round(s)"
    print(f"importer / psql \\copy = {overall:.2f}x over {rounds}; {verdict} the target of {TARGET_RATIO}x")


if __name__ == "__main__":
    main()
