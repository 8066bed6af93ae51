"""The demo set does not depend on Python's string hash seed: two fresh builds under PYTHONHASHSEED=1 and 2
(each its own SQLite file and VAR dir, run as a user runs them) export byte-identical files.

Set and dict iteration order of strings changes with the hash seed, so any ordering left to it (a sort
key that ties, a loop over a set) shows up here as different bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.slow

# Lines of card.md / keys of manifest.json that state when the snapshot was made (the clock, not the content).
CLOCK_LINE = "Made by "
CLOCK_KEYS = ("created_at",)
CROISSANT_CLOCK_KEYS = ("datePublished",)  # croissant.json: the snapshot's creation date


def _build(folder: Path, hash_seed: str) -> subprocess.Popen[str]:
    """Demo → snapshot → export_set and export_pab, in one shell pipeline (started, not waited for)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        PHYSREVIEW_VAR_DIR=str(folder / "var"),
        PYTHONHASHSEED=hash_seed,
    )
    manage = [sys.executable, "manage.py"]
    steps = [
        [*manage, "demo", "--no-serve", "--quiet"],
        [*manage, "make_snapshot", "--quiet", "--ehr-provenance", "synthetic"],
        [*manage, "export_set", "--quiet", "--out", str(folder / "set")],
        [*manage, "export_pab", "--quiet", "--out", str(folder / "sessions.jsonl")],
    ]
    script = " && ".join(subprocess.list2cmdline(step) for step in steps)
    return subprocess.Popen(
        ["/bin/sh", "-c", script],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _files(folder: Path) -> dict[str, bytes]:
    out = {p.name: p.read_bytes() for p in sorted((folder / "set").iterdir())}
    out["sessions.jsonl (export_pab, every demo session)"] = (folder / "sessions.jsonl").read_bytes()
    card = out.pop("card.md").decode("utf-8").splitlines()
    out["card.md (without its clock line)"] = "\n".join(x for x in card if not x.startswith(CLOCK_LINE)).encode()
    manifest = json.loads(out.pop("manifest.json"))
    out["manifest.json (without its clock keys)"] = json.dumps(
        {k: v for k, v in manifest.items() if k not in CLOCK_KEYS}, sort_keys=True
    ).encode()
    croissant = json.loads(out.pop("croissant.json"))
    out["croissant.json (without its clock keys)"] = json.dumps(
        {k: v for k, v in croissant.items() if k not in CROISSANT_CLOCK_KEYS}, sort_keys=True
    ).encode()
    return out


def test_demo_exports_are_byte_identical_across_hash_seeds(tmp_path):
    folders = {seed: tmp_path / f"hashseed{seed}" for seed in ("1", "2")}
    for folder in folders.values():
        (folder / "var").mkdir(parents=True)
    builds = {seed: _build(folder, seed) for seed, folder in folders.items()}  # both at once: 2 cores
    for seed, build in builds.items():
        _out, err = build.communicate(timeout=900)
        assert build.returncode == 0, f"PYTHONHASHSEED={seed}: {err[-3000:]}"

    one, two = (_files(folder) for folder in folders.values())

    assert sorted(one) == sorted(two)
    assert {"SHA256SUMS", "turns.jsonl", "turns.parquet", "med_safety.jsonl"} <= set(one)
    assert len(one["sessions.jsonl (export_pab, every demo session)"].splitlines()) == 48
    different = [name for name in one if one[name] != two[name]]
    assert different == []
