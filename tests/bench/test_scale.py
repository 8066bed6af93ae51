"""``bench/scale.py`` runs end to end at a tiny size and refuses to report a stage that did less than asked.

Cases come from the script's contract (issue 37, item 5, and its docstring): five stages (generate, review,
snapshot, export, evaluate), each printed with its figures per size, and a non-zero exit when a stage does not
do all its work. The script runs as a person runs it, in a child process on SQLite (``DATABASE_URL`` and the
broker removed from its environment), so the test's own database is not involved. No timing is asserted.
"""

import importlib.util
import json
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


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


# What each stage prints (or writes) when it did one session less than the 12 asked, in the commands' own formats
# (the end-to-end test above parses the real outputs).
SHORT = {
    "generate": "run 1 finished: 11 made, 1 rejected by gate, 0 without a fitting admission; tokens 0",
    "review": '{"approved_turns": 48, "approved_sessions": 11}',
    "snapshot": "v1\n11 sessions, 44 turns; languages en, zh; content sha256 ab",
    "export": "v1 → out\n  ab  med_safety.jsonl  (12 rows, 9 B)\n  cd  turns.jsonl  (88 rows, 9 B)",
}


@pytest.mark.parametrize("stage", [*SHORT, "evaluate"])
def test_a_stage_that_falls_short_fails_the_run(stage, tmp_path, monkeypatch):
    """A stage that exits 0 but did less than asked (a session rejected by a gate, a turn left unapproved, a
    session missing from the snapshot, the export or the run) stops the bench with a message naming it."""
    bench = _load_bench()
    monkeypatch.setattr(bench, "_run", lambda cmd, env, what: (bench.Measure(1.0, 1.0, 100.0), SHORT.get(stage, "")))
    run = tmp_path / "out" / "run"
    run.mkdir(parents=True)
    metrics = {"en": {"n_sessions": 11, "n_turns": 44}}
    (run / "summary.json").write_text(json.dumps({"status": "finished", "pending": {}, "metrics": metrics}))
    with pytest.raises(bench.StageFailed, match=r"\b(11|44|88|48) of (12|48|96)\b"):
        bench.run_stage(stage, n=12, env={}, seed=1, out_dir=tmp_path / "out", quiet=True)


def test_a_failing_command_fails_the_run(tmp_path):
    """One patient leaves tables empty, which the importer refuses: the bench says which step failed and exits 1."""
    done = _scale(tmp_path, "--sizes", "2", "--patients", "1")
    assert done.returncode == 1
    assert "FAILED: import_mimic: exit 1" in done.stderr
    assert "net time per session" not in done.stdout


def test_bad_sizes_are_refused_before_any_work(tmp_path):
    done = _scale(tmp_path, "--sizes", "50,fifty")
    assert done.returncode == 2
    assert "--sizes '50,fifty'" in done.stderr
    assert not (tmp_path / "cohort").exists()
