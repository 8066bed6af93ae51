"""runeval's outputs stay the same when the command's internals change (issue 37 item 3: lazy imports,
streamed sessions, results written as they finish).

The reference (``data/runeval_reference.json``) was written by the code before those changes, on the
generated sessions of ``tests/evaluation/conftest.py`` (seeded); it keeps ``summary.json`` and
``turns.jsonl`` (a SHA-256 per turn) of three runs (the oracle and heuristic baselines, both languages
and variants, and a
``--limit``) without what differs between two runs of the same code: ids, timestamps, durations and
paths. Regenerate it only for an intended change of the outputs:
``RUNEVAL_REFERENCE_WRITE=1 pytest tests/evaluation/test_runeval_equivalence.py``.
"""

import hashlib
import json
import os
from pathlib import Path

from django.core.management import call_command

REFERENCE = Path(__file__).parent / "data" / "runeval_reference.json"
RUNS = {
    "oracle-both": ("--model", "rules:oracle", "--language", "both", "--variant", "both"),
    "heuristic": ("--model", "rules:heuristic", "--trials", "2"),
    "no-tools-limit": ("--model", "rules:no-tools", "--limit", "2", "--language", "zh"),
}
# Keys whose values differ between two runs of the same code (times, ids, where the files went).
VOLATILE = {
    "run_id",
    "created_at",
    "started_at",
    "finished_at",
    "output_dir",
    "wall_s",
    "elapsed_s",
    "model_s",
    "backoff_s",
    "tools_s",
    "harness_s",
    "turn_latency_mean_s",
    "turn_latency_max_s",
    "latency_s",
    "model_latency_s",
    "tool_s",
    "timing",
    "duration_s",
    "elapsed_ms",
    "ms",
    "code_version",
    "git",
    "host",
    "python",
    "pid",
}


def _stable(value):
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, float):
        return round(value, 9)
    return value


def _digest(line: dict) -> dict:
    """A turn's identity and the SHA-256 of the rest (the reference stays small)."""
    text = json.dumps(line, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    ids = ("session_id", "language", "variant", "trial", "turn_index")
    return {**{k: line[k] for k in ids}, "sha256": hashlib.sha256(text.encode()).hexdigest()}


def _outputs(tmp_path: Path) -> dict:
    found = {}
    for name, args in RUNS.items():
        out = tmp_path / name
        call_command("runeval", *args, "--sessions", "all", "--quiet", "--output", str(out))
        summary = json.loads((out / "summary.json").read_text())
        lines = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
        # Threads finish in any order: compare turns in their identity order.
        lines.sort(key=lambda t: (t["session_id"], t["language"], t["variant"], t["trial"], t["turn_index"]))
        found[name] = {"summary": _stable(summary), "turns": [_digest(line) for line in _stable(lines)]}
    return found


def test_outputs_match_the_reference_of_the_code_before_the_change(sessions, tmp_path):
    found = _outputs(tmp_path)
    if os.environ.get("RUNEVAL_REFERENCE_WRITE") == "1":
        REFERENCE.write_text(json.dumps(found, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    reference = json.loads(REFERENCE.read_text())
    for name in RUNS:
        assert found[name]["summary"] == reference[name]["summary"], name
        assert len(found[name]["turns"]) == len(reference[name]["turns"]), name
        for got, want in zip(found[name]["turns"], reference[name]["turns"], strict=True):
            assert got == want, (name, want.get("session_id"), want.get("turn_index"))
