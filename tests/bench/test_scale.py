"""``bench/scale.py`` runs end to end at a tiny size and refuses to report a stage that did less than asked.

Cases come from the script's contract (issue 37, item 5, and its docstring): five stages (generate, review,
snapshot, export, evaluate), each printed with its figures per size, and a non-zero exit when a stage does not
do all its work. The script runs as a person runs it, in a child process on SQLite (``DATABASE_URL`` and the
broker removed from its environment), so the test's own database is not involved. No timing is asserted.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

SCRIPT = Path(settings.BASE_DIR) / "bench" / "scale.py"
STAGES = ("generate", "review", "snapshot", "export", "evaluate")

pytestmark = pytest.mark.slow


def _scale(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--work-dir", str(tmp_path), "--quiet", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_every_stage_runs_and_is_printed_at_a_tiny_size(tmp_path):
    done = _scale(tmp_path, "--sizes", "2,3", "--patients", "10")
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "baseline (django.setup() alone" in out
    for stage in STAGES:
        for n in (2, 3):
            # A table row: stage name, size, then figures; the larger size carries a growth ratio.
            assert re.search(rf"│ {stage}\s+│\s+{n} │\s+[0-9.]+ │", out), f"no row for {stage} at {n}:\n{out}"
        assert re.search(
            rf"^{stage}: net time per session [0-9.]+× \(CPU [0-9.]+×\) from 2 to 3 sessions", out, re.M
        ), out
    # The stages' own products: the export's files and runeval's summary, for the size asked.
    assert (tmp_path / "out-3" / "export" / "turns.parquet").exists()
    assert (tmp_path / "out-3" / "run" / "summary.json").exists()


def test_a_stage_that_falls_short_fails_the_run(tmp_path):
    """One patient cannot fit every scenario and tier: generate makes fewer sessions than asked, so the run
    stops there with a non-zero exit and says which stage and by how much, and prints no figures."""
    done = _scale(tmp_path, "--sizes", "12", "--patients", "1")
    assert done.returncode != 0
    assert "FAILED: generate" in done.stderr
    assert "net time per session" not in done.stdout


def test_bad_sizes_are_refused_before_any_work(tmp_path):
    done = _scale(tmp_path, "--sizes", "50,fifty")
    assert done.returncode == 2
    assert "--sizes '50,fifty'" in done.stderr
    assert not (tmp_path / "cohort").exists()
