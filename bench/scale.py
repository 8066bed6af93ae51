"""Bench: how each stage of the pipeline grows with the size of the set (issue 37, item 5).

    .venv/bin/python bench/scale.py [--sizes 50,500,5000] [--patients 100] [--seed 7] [--keep]

For each size N, in a database of its own, on one synthetic cohort (``manage.py synth_ehr``, imported with
``import_mimic`` before the timed stages), five stages run one after another, each in a fresh process
through the project's real entry points:

1. generate  ``manage.py generate --backend rules --n N`` (in-process, no broker: the bench unsets
             ``CELERY_BROKER_URL`` for its children);
2. review    this script's ``--stage review``: two reviewers assigned to every session through
             ``annotations.services.distribute``, then ``submit_review(decision="approve")`` by both on every
             turn, so every turn is approved through the review services;
3. snapshot  ``manage.py make_snapshot --ehr-provenance synthetic`` (freeze the curated set);
4. export    ``manage.py export_set --snapshot latest --format all`` (PAB JSONL, flat JSONL, Parquet);
5. evaluate  ``manage.py runeval --model rules:oracle --judge rules`` on that snapshot.

Each stage's wall time, CPU time and peak RSS come from ``os.wait4`` on its process (the peak covers the
processes it waited for too, e.g. runeval's workers). Printed per stage and size:

* time per session, raw (wall / N) and net of start-up ((wall - baseline wall) / N), and the growth ratio: net
  time per session at N over the same at the smallest size (1.0 = linear; 10x the sessions at 2.0 = each
  session costs twice as much);
* peak RSS, as a ratio to the baseline process and as MB added per session over the smallest size.

The baseline, measured in the same run (median of 3): a process that only sets Django up
(``django.setup()``), i.e. the start-up every stage pays. Before each size after the first, the script prints
how long it expects that size to take, extrapolated from the largest size done (linearly, and with the
growth seen so far).

Databases: with ``DATABASE_URL`` on PostgreSQL, ``physreview_bench_scale_<N>`` on that server (dropped and
made anew, dropped at the end unless ``--keep``); otherwise a SQLite file in a temporary ``PHYSREVIEW_VAR_DIR``
per size (``--work-dir`` to choose where). Exits non-zero if a stage fails or does less than all its work:
fewer sessions generated, approved, frozen, exported or evaluated than N.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
MANAGE = [PYTHON, str(BASE_DIR / "manage.py")]
STAGES = ("generate", "review", "snapshot", "export", "evaluate")
DB_PREFIX = "physreview_bench_scale_"
TURNS_PER_SESSION = 4
LANGUAGES = 2  # the flat export has one row per turn and language


@dataclass(frozen=True)
class Measure:
    wall: float  # s
    cpu: float  # s, user + system, the process and the children it waited for
    rss_mb: float  # peak resident set size (largest of the process and its waited-for children)


class StageFailed(Exception):
    pass


def _run(cmd: list[str], *, env: dict[str, str], what: str) -> tuple[Measure, str]:
    """Run ``cmd`` as a child; stdout captured, stderr (progress bars, errors) passed through."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=BASE_DIR, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    if proc.returncode != 0:
        raise StageFailed(f"{what}: exit {proc.returncode}\n{out[-2000:]}")
    # Linux reports ru_maxrss in KiB.
    return Measure(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024), out


# --- databases ---------------------------------------------------------------------------------------


def _postgres_url() -> str | None:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://", "pgsql://")) else None


def _admin(sql: str, url: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql)


def _size_env(n: int, work: Path, pg_url: str | None) -> dict[str, str]:
    # Without the broker (stages run in-process) and with bytecode cached, as a user's commands start.
    drop = ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["DJANGO_SETTINGS_MODULE"] = "physreview.settings"
    var = work / f"var-{n}"
    shutil.rmtree(var, ignore_errors=True)  # a fresh set each time, as the PostgreSQL database below
    env["PHYSREVIEW_VAR_DIR"] = str(var)
    env["PYTHONPATH"] = str(BASE_DIR)
    if pg_url:
        name = f"{DB_PREFIX}{n}"
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', pg_url)
        _admin(f'CREATE DATABASE "{name}"', pg_url)
        env["DATABASE_URL"] = urlunsplit(urlsplit(pg_url)._replace(path=f"/{name}"))
    else:
        env.pop("DATABASE_URL", None)
    return env


# --- the stages --------------------------------------------------------------------------------------


def _check(what: str, got: int, want: int) -> None:
    if got != want:
        raise StageFailed(f"{what}: {got} of {want}")


def _number(pattern: str, text: str, what: str) -> tuple[int, ...]:
    match = re.search(pattern, text)
    if match is None:
        raise StageFailed(f"{what}: output not understood:\n{text[-2000:]}")
    return tuple(int(g) for g in match.groups())


def run_stage(stage: str, *, n: int, env: dict[str, str], seed: int, out_dir: Path, quiet: bool) -> Measure:
    q = ["--quiet"] if quiet else []
    out_dir.mkdir(parents=True, exist_ok=True)
    if stage == "generate":
        cmd = [*MANAGE, "generate", "--backend", "rules", "--n", str(n), "--seed", str(seed), *q]
        measure, out = _run(cmd, env=env, what=stage)
        (made,) = _number(r"finished: (\d+) made,", out, stage)
        _check("sessions generated and passing the gates", made, n)
    elif stage == "review":
        measure, out = _run([PYTHON, __file__, "--stage", "review", *q], env=env, what=stage)
        counts = json.loads(out.strip().splitlines()[-1])
        _check("turns approved", counts["approved_turns"], n * TURNS_PER_SESSION)
        _check("sessions with every turn approved", counts["approved_sessions"], n)
    elif stage == "snapshot":
        cmd = [*MANAGE, "make_snapshot", "--ehr-provenance", "synthetic", *q]
        measure, out = _run(cmd, env=env, what=stage)
        sessions, turns = _number(r"(\d+) sessions, (\d+) turns", out, stage)
        _check("sessions frozen", sessions, n)
        _check("turns frozen", turns, n * TURNS_PER_SESSION)
    elif stage == "export":
        folder = out_dir / "export"
        cmd = [*MANAGE, "export_set", "--snapshot", "latest", "--format", "all", "--out", str(folder), *q]
        measure, out = _run(cmd, env=env, what=stage)
        (rows,) = _number(r"turns\.jsonl\s+\((\d+) rows", out, stage)
        _check("flat rows exported (turns x languages)", rows, n * TURNS_PER_SESSION * LANGUAGES)
        pab = sum(int(r) for r in re.findall(r"\S+\.jsonl\s+\((\d+) rows", out)) - rows
        _check("PhysAssistBench lines exported (sessions)", pab, n)
    elif stage == "evaluate":
        folder = out_dir / "run"
        cmd = [*MANAGE, "runeval", "--model", "rules:oracle", "--judge", "rules", "--output", str(folder), *q]
        measure, _ = _run(cmd, env=env, what=stage)
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        if summary["status"] != "finished":
            raise StageFailed(f"evaluate: run status {summary['status']}, pending {summary['pending']}")
        _check("sessions evaluated", summary["metrics"]["en"]["n_sessions"], n)
        _check("turns evaluated", summary["metrics"]["en"]["n_turns"], n * TURNS_PER_SESSION)
    else:
        raise ValueError(stage)
    return measure


def review_stage(*, quiet: bool) -> None:
    """Child process: two reviewers approve every turn through the review services; prints the counts as JSON."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from tqdm import tqdm

    from annotations.models import TurnState
    from annotations.roles import REVIEWER
    from annotations.services import distribute, submit_review
    from scenarios.models import Session, SessionStatus, Turn

    group, _ = Group.objects.get_or_create(name=REVIEWER)
    reviewers = []
    for name in ("bench_reviewer_a", "bench_reviewer_b"):
        user, _ = get_user_model().objects.get_or_create(username=name)
        user.groups.add(group)
        reviewers.append(user)
    sessions = Session.objects.exclude(status=SessionStatus.REJECTED_BY_GATE).order_by("pk").only("pk")
    distribute(sessions=list(sessions), reviewers=reviewers, per_session=2)
    turn_ids = list(
        Turn.objects.filter(session__in=sessions).order_by("session_id", "index").values_list("pk", flat=True)
    )
    batch = 200  # turns held at a time; the id list is all the stage keeps of the set
    with tqdm(total=len(turn_ids), desc="review", unit="turn", file=sys.stderr, disable=quiet) as bar:
        for start in range(0, len(turn_ids), batch):
            chunk = Turn.objects.select_related("session").in_bulk(turn_ids[start : start + batch])
            for pk in turn_ids[start : start + batch]:
                turn = chunk[pk]
                for reviewer in reviewers:
                    submit_review(turn=turn, reviewer=reviewer, decision="approve", base_version=turn.version)
                bar.update(1)
    statuses = Turn.objects.filter(session__in=sessions).values_list("session_id", "status")
    per_session: dict[int, set[str]] = {}
    for session_id, status in statuses:
        per_session.setdefault(session_id, set()).add(status)
    approved = Turn.objects.filter(session__in=sessions, status=TurnState.APPROVED).count()
    whole = sum(states == {TurnState.APPROVED} for states in per_session.values())
    print(json.dumps({"approved_turns": approved, "approved_sessions": whole}))


def baseline(env: dict[str, str]) -> Measure:
    """Median of 3 processes that only set Django up: the start-up each stage pays."""
    code = "import django; django.setup()"
    runs = [_run([PYTHON, "-c", code], env=env, what="baseline")[0] for _ in range(3)]
    return Measure(*(statistics.median(getattr(m, f) for m in runs) for f in ("wall", "cpu", "rss_mb")))


# --- reporting ---------------------------------------------------------------------------------------


def _net_per_session(m: Measure, base: Measure, n: int) -> float:
    return max(m.wall - base.wall, 0.0) / n


def _estimate(results: dict[int, dict[str, Measure]], base: Measure, n: int) -> tuple[float, float]:
    """Seconds the stages of size ``n`` should take: linear from the largest size done, and with the per-session
    growth between the two largest sizes done carried on (same growth per decade of size)."""
    done = sorted(results)
    last = done[-1]
    linear = grown = 0.0
    for stage in STAGES:
        per = _net_per_session(results[last][stage], base, last)
        linear += base.wall + per * n
        factor = 1.0
        if len(done) > 1:
            prev = done[-2]
            before = _net_per_session(results[prev][stage], base, prev)
            if before > 0 and per > 0:
                factor = (per / before) ** (math.log(n / last) / math.log(last / prev))
        grown += base.wall + per * factor * n
    return linear, grown


def _cpu_per_session(m: Measure, base: Measure, n: int) -> float:
    return max(m.cpu - base.cpu, 0.0) / n


def _ratio(value: float, ref: float) -> str:
    return f"{value / ref:.2f}×" if ref > 0 else "—"


def _verdict(growth: float) -> str:
    return "super-linear" if growth > 1.5 else "about linear" if growth > 0.67 else "sub-linear"


def report(results: dict[int, dict[str, Measure]], base: Measure, setup: dict[int, Measure]) -> None:
    from rich.console import Console
    from rich.table import Table

    sizes = sorted(results)
    first, last = sizes[0], sizes[-1]
    table = Table(title="time per session and peak memory per stage (growth: against the smallest size)")
    for name in (
        "stage",
        "sessions",
        "wall s",
        "net ms/session",
        "growth",
        "CPU ms/session",
        "CPU growth",
        "peak RSS MB",
        "× baseline",
        "MB/session added",
    ):
        table.add_column(name, justify="right" if name != "stage" else "left")
    for stage in STAGES:
        ref = results[first][stage]
        for n in sizes:
            m = results[n][stage]
            net, cpu = _net_per_session(m, base, n), _cpu_per_session(m, base, n)
            added = f"{(m.rss_mb - ref.rss_mb) / (n - first):.3f}" if n != first else "—"
            table.add_row(
                stage,
                f"{n:,}",
                f"{m.wall:.1f}",
                f"{1000 * net:.1f}",
                _ratio(net, _net_per_session(ref, base, first)),
                f"{1000 * cpu:.1f}",
                _ratio(cpu, _cpu_per_session(ref, base, first)),
                f"{m.rss_mb:.0f}",
                f"{m.rss_mb / base.rss_mb:.2f}×",
                added,
            )
        table.add_section()
    console = Console(width=170)
    console.print(
        f"baseline (django.setup() alone, median of 3): {base.wall:.2f} s wall, {base.cpu:.2f} s CPU, "
        f"{base.rss_mb:.0f} MB peak RSS; net = minus the baseline's wall (CPU) time"
    )
    for n in sizes:
        console.print(f"setup of size {n:,} (migrate + import the cohort, not a stage): {setup[n].wall:.1f} s")
    console.print(table)
    if len(sizes) < 2:
        return
    for stage in STAGES:
        ref, m = results[first][stage], results[last][stage]
        wall = _net_per_session(m, base, last) / max(_net_per_session(ref, base, first), 1e-9)
        cpu = _cpu_per_session(m, base, last) / max(_cpu_per_session(ref, base, first), 1e-9)
        print(
            f"{stage}: net time per session {wall:.2f}× (CPU {cpu:.2f}×) from {first:,} to {last:,} sessions "
            f"(wall {_verdict(wall)}, CPU {_verdict(cpu)}); peak RSS {ref.rss_mb:.0f} → {m.rss_mb:.0f} MB"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,500,5000", help="comma-separated set sizes (sessions), run in order")
    parser.add_argument("--patients", type=int, default=100, help="synthetic cohort size (synth_ehr --patients)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the cohort and of generation")
    parser.add_argument("--work-dir", help="folder for the cohort, SQLite files and exports (default: temporary)")
    parser.add_argument("--keep", action="store_true", help="keep the bench databases and files afterwards")
    parser.add_argument("--quiet", action="store_true", help="no progress bars from the stages")
    parser.add_argument("--stage", choices=["review"], help=argparse.SUPPRESS)  # this script's own child
    args = parser.parse_args()
    if args.stage == "review":
        sys.path.insert(0, str(BASE_DIR))
        review_stage(quiet=args.quiet)
        return 0
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: expected comma-separated whole numbers, e.g. 50,500")
    if not sizes or min(sizes) < 1 or len(set(sizes)) != len(sizes):
        parser.error(f"--sizes {args.sizes!r}: each size at least 1, no size twice")
    if args.patients < 1:
        parser.error("--patients must be at least 1")
    sizes.sort()
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="physreview_bench_scale_"))
    work.mkdir(parents=True, exist_ok=True)
    pg_url = _postgres_url()
    print(f"database: {'PostgreSQL ' + DB_PREFIX + '<N>' if pg_url else 'SQLite under ' + str(work)}; sizes {sizes}")

    results: dict[int, dict[str, Measure]] = {}
    setup: dict[int, Measure] = {}
    try:
        env0 = _size_env(0, work, None)  # cohort and baseline touch no database
        cohort = work / "cohort"
        cmd = [*MANAGE, "synth_ehr", "--patients", str(args.patients), "--seed", str(args.seed)]
        _run([*cmd, "--out", str(cohort), "--quiet"], env=env0, what="synth_ehr")
        base = baseline(env0)
        for n in sizes:
            if results:
                linear, grown = _estimate(results, base, n)
                print(
                    f"size {n:,}: expected ~{linear / 60:.1f} min linearly, ~{grown / 60:.1f} min with the growth seen"
                )
            env = _size_env(n, work, pg_url)
            started = time.perf_counter()
            _run([*MANAGE, "migrate", "--verbosity", "0"], env=env, what="migrate")
            _run([*MANAGE, "import_mimic", str(cohort), "--quiet"], env=env, what="import_mimic")
            setup[n] = Measure(time.perf_counter() - started, 0.0, 0.0)
            results[n] = {}
            for stage in STAGES:
                print(f"size {n:,}: {stage} …", file=sys.stderr, flush=True)
                results[n][stage] = run_stage(
                    stage, n=n, env=env, seed=args.seed, out_dir=work / f"out-{n}", quiet=args.quiet
                )
                m = results[n][stage]
                print(f"size {n:,}: {stage} {m.wall:.1f} s, {m.rss_mb:.0f} MB", file=sys.stderr, flush=True)
    except StageFailed as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            if pg_url:
                for n in sizes:
                    _admin(f'DROP DATABASE IF EXISTS "{DB_PREFIX}{n}" WITH (FORCE)', pg_url)
            if not args.work_dir:
                shutil.rmtree(work, ignore_errors=True)
    report(results, base, setup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
