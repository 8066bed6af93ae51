"""Bench: sessions/s of the rules backend over the demo cohort, the whole path `manage.py generate` takes.

    .venv/bin/python bench/generate_throughput.py [--n 48] [--seed 1]

Each session: planner → gold EHR calls → agentic patient (memory, persona, answers) → quality gates
→ stored with turns, gold steps, rubric items and the patient's gold answers in both languages.

Runs in its own database so it never touches the demo's: with ``DATABASE_URL`` on PostgreSQL, the
database ``physreview_bench_generate`` on that server (created if missing); otherwise a SQLite file
in a temporary folder. The demo cohort is imported there first (not timed).
"""

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
BENCH_DB = "physreview_bench_generate"


def _use_bench_database() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg

        parts = urlsplit(url)
        admin = urlunsplit(parts._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone():
                conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
        os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
        return f"PostgreSQL database {BENCH_DB}"
    os.environ.pop("DATABASE_URL", None)
    os.environ["PHYSREVIEW_VAR_DIR"] = tempfile.mkdtemp(prefix="physreview_bench_generate_")
    return f"SQLite in {os.environ['PHYSREVIEW_VAR_DIR']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="sessions (spread over scenario x tier)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    where = _use_bench_database()

    import django

    django.setup()
    from django.core.management import call_command
    from tqdm import tqdm

    from scenarios import services
    from scenarios.models import GenerationRun, Session

    call_command("migrate", verbosity=0)
    call_command("import_mimic", str(BASE_DIR / "ehr" / "data" / "demo_cohort"), "--quiet")
    # Fresh run each time: the bench measures making sessions, not finding them made.
    Session.objects.all().delete()
    GenerationRun.objects.all().delete()

    run = services.create_run(
        backend="rules",
        seed=args.seed,
        scenarios=list(services.ALL_SCENARIOS),
        tiers=list(services.ALL_TIERS),
        n=args.n,
    )
    slots = services.missing_slots(run=run)
    start = time.perf_counter()
    for slot in tqdm(slots, unit="session"):
        services.generate_slot(run_id=run.pk, index=slot.index)
    elapsed = time.perf_counter() - start
    run = services.refresh_run_counts(run_id=run.pk, finished=True)
    statuses = Counter(Session.objects.filter(run=run).values_list("status", flat=True))

    print(f"database: {where}")
    print(f"sessions: {len(slots)} (seed {args.seed}, all scenarios x tiers) in {elapsed:.2f} s")
    print(f"throughput: {len(slots) / elapsed:.1f} sessions/s ({4 * len(slots) / elapsed:.1f} turns/s)")
    print(f"stored: {dict(sorted(statuses.items()))}; no fitting admission: {len(run.errors)}")
    print(f"gate failures: {dict(services.gate_reasons(run=run)) or 'none'}")


if __name__ == "__main__":
    main()
