"""The whole ``manage.py runeval`` command, timed and sized from outside (used by bench/runeval_overhead.py).

``clone_sessions`` copies the demo's sessions (turns, gold steps, rubric) in the database under new
session and record ids (suffix ``~bench~N``), so a real command run finds them with ``--sessions all``;
``drop_clones`` deletes them again. ``run_command`` starts ``manage.py runeval`` as a child process and
returns its wall time (process start to exit: imports, Django set-up, dataset load, play, report), its
peak resident memory (the largest of the process and its forked workers, from ``/usr/bin/time``) and
the run's usage from its ``summary.json`` and ``turns.jsonl``.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

BASE_DIR = Path(__file__).resolve().parent.parent
CLONE_MARK = "~bench~"


class CommandRun(NamedTuple):
    wall: float
    peak_rss_mb: float
    cpu_s: float  # user + system CPU of the command and its forked workers (steadier than wall on a busy machine)
    model_s: float
    tools_s: float
    calls: int
    turns: int
    job_calls: list[int]
    run_id: int


def clone_sessions(*, total: int) -> int:
    """Clone the database's sessions until there are at least ``total``; returns how many there are."""
    from django.db import transaction

    from scenarios.models import GoldStep, RubricItem, Session

    originals = list(Session.objects.exclude(session_id__contains=CLONE_MARK).order_by("record_id"))
    if not originals:
        raise SystemExit("no sessions in the database: run `manage.py demo --no-serve` first")
    have = Session.objects.count()
    copy = Session.objects.filter(session_id__contains=CLONE_MARK).count() // len(originals)
    while have < total:
        with transaction.atomic():
            for source in originals:
                turns = list(source.turns.order_by("index").prefetch_related("steps", "rubric_items"))
                session = Session.objects.get(pk=source.pk)
                session.pk = None
                session.run, session.run_index = None, None
                session.session_id = f"{source.session_id}{CLONE_MARK}{copy}"
                session.record_id = f"{source.record_id}{CLONE_MARK}{copy}"
                session.save()
                for turn in turns:
                    steps, items = list(turn.steps.all()), list(turn.rubric_items.all())
                    turn.pk, turn.session = None, session
                    turn.save()
                    for row in (*steps, *items):
                        row.pk, row.turn = None, turn
                    GoldStep.objects.bulk_create(steps)
                    RubricItem.objects.bulk_create(items)
        have += len(originals)
        copy += 1
    return have


def drop_clones() -> None:
    from scenarios.models import Session

    Session.objects.filter(session_id__contains=CLONE_MARK).delete()


def command_env() -> dict[str, str]:
    """The command's environment as a user's: bytecode cached. With PYTHONDONTWRITEBYTECODE set (as on some
    machines) every start compiles the project's modules from source again: ~0.2 s of the fixed cost."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_project() -> None:
    """Write the project's bytecode once, as a first start would (not timed)."""
    import compileall

    for package in ("core", "ehr", "scenarios", "annotations", "evaluation", "physreview"):
        compileall.compile_dir(str(BASE_DIR / package), quiet=1)


def run_command(*, base_url: str, key_env: str, concurrency: int, limit: int, processes: str) -> CommandRun:
    args = [
        sys.executable,
        str(BASE_DIR / "manage.py"),
        "runeval",
        "--model",
        "bench-model",
        "--base-url",
        base_url,
        "--api-key-env",
        key_env,
        "--snapshot",
        "none",
        "--sessions",
        "all",
        "--limit",
        str(limit),
        "--concurrency",
        str(concurrency),
        "--processes",
        processes,
        "--no-cache",
        "--quiet",
    ]
    with tempfile.TemporaryDirectory(prefix="runeval-bench-") as tmp:
        log, rss = Path(tmp) / "log.txt", Path(tmp) / "maxrss.txt"
        # Through /usr/bin/time: a child forked from this (large) process would carry this process's
        # peak into its own ru_maxrss across exec; time's is small. %M: the largest of runeval and its
        # forked workers, in KiB.
        started = time.perf_counter()
        with log.open("w") as fh:
            proc = subprocess.run(
                ["/usr/bin/time", "-f", "%M %U %S", "-o", str(rss), *args, "--output", tmp],
                stdout=fh,
                stderr=fh,
                env=command_env(),
            )
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"runeval failed ({proc.returncode}):\n{log.read_text()[-3000:]}")
        max_kib, user_s, sys_s = rss.read_text().split()[-3:]
        peak, cpu_s = int(max_kib) / 1024, float(user_s) + float(sys_s)
        summary = json.loads((Path(tmp) / "summary.json").read_text())
        per_session: dict[str, int] = {}
        model_s = tools_s = 0.0
        calls = turns = 0
        with (Path(tmp) / "turns.jsonl").open() as fh:
            for line in fh:
                row = json.loads(line)
                trace = row["trace"]
                n = trace["usage"]["model_calls"]
                per_session[row["session_id"]] = per_session.get(row["session_id"], 0) + n
                model_s += trace["usage"]["model_latency_s"]
                tools_s += trace["timing"]["tools_s"]
                calls += n
                turns += 1
    from evaluation.models import EvalRun

    EvalRun.objects.filter(pk=summary["run_id"]).delete()
    return CommandRun(wall, peak, cpu_s, model_s, tools_s, calls, turns, list(per_session.values()), summary["run_id"])
