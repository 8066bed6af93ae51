"""Processes for the fault-injection tests of issue 36 F4: a real Celery worker, ``make_snapshot`` and ``generate``,
each in its own interpreter on the test database and Redis, so the test can ``kill -9`` them.

``python -m tests.physreview.job_processes worker|make_snapshot|generate [args]``. With ``SLOW_JOB_SECONDS`` set,
every snapshot progress step and every generation slot first sleeps that long, so a kill lands mid-job (the job
code itself is the product's; only its pace changes). The wrappers run Django's own entry points unchanged.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

from tests.physreview.startup import BASE_ENV


def database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def start(role: str, *args: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start ``role`` (worker, make_snapshot, generate) in a new interpreter; its output goes to ``log``."""
    full_env = {**BASE_ENV, "DATABASE_URL": database_url(), "PYTHONUNBUFFERED": "1", **env}
    out = log.open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "tests.physreview.job_processes", role, *args],
        env=full_env,
        cwd=settings.BASE_DIR,
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def kill9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill9(proc)


def wait_for(condition, *, timeout_s: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-4000:] if log and log.exists() else ""
    raise AssertionError(f"{what}: not within {timeout_s:g} s\n{tail}")


def _slow_down(seconds: float) -> None:
    from annotations.snapshots import services as snapshot_services
    from scenarios import services as generation_services

    set_progress, generate_slot = snapshot_services._set_progress, generation_services.generate_slot

    def slow_progress(*args, **kwargs):
        result = set_progress(*args, **kwargs)
        time.sleep(seconds)
        return result

    def slow_slot(*args, **kwargs):
        time.sleep(seconds)
        return generate_slot(*args, **kwargs)

    snapshot_services._set_progress = slow_progress
    generation_services.generate_slot = slow_slot


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    import django

    django.setup()
    if os.environ.get("SLOW_JOB_SECONDS"):
        _slow_down(float(os.environ["SLOW_JOB_SECONDS"]))
    role, rest = argv[0], argv[1:]
    if role == "worker":
        from physreview.celery import app

        app.worker_main(
            ["worker", "--pool", "solo", "--loglevel", "WARNING", "--without-gossip", "--without-mingle", *rest]
        )
    else:
        from django.core.management import call_command

        call_command(role, *rest)


if __name__ == "__main__":
    main(sys.argv[1:])
