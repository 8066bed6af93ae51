"""``runeval --processes 2``: kill -9 of the parent takes its worker processes with it, and an immediate
``--resume`` completes the run (no orphan still writing turns, no duplicate-key error)."""

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from evaluation.models import EvalRun, TurnResult
from tests.evaluation.conftest import make_sessions
from tests.evaluation.runeval_helpers import responder, resume, runeval_env, start_runeval
from tests.fakes.openai_server import FakeOpenAIServer


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # a zombie has ended


def _wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_with_their_parent_and_resume_completes(transactional_db, demo_cohort, tmp_path, monkeypatch):
    env = runeval_env(key_env="D_FAKE_KEY", tmp_path=tmp_path, monkeypatch=monkeypatch)
    make_sessions(n=3, seed=11)
    common = ["--model", "orphan-model", "--api-key-env", "D_FAKE_KEY", "--sessions", "all", "--quiet"]
    # Slow answers: played to the end, the run would take many seconds more after the kill.
    with FakeOpenAIServer(responder=responder(0.4)) as server:
        proc = start_runeval(
            *common,
            "--concurrency",
            "2",
            "--processes",
            "2",
            "--base-url",
            server.base_url,
            "--output",
            str(tmp_path / "killed"),
            env=env,
        )
        assert _wait_for(lambda: TurnResult.objects.filter(run__model="orphan-model").count() >= 2, 60)
        workers = _children(proc.pid)
        assert len(workers) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert _wait_for(lambda: not any(_alive(pid) for pid in workers), 20), "worker processes outlived runeval"
    run = EvalRun.objects.get(model="orphan-model")
    stopped_at = TurnResult.objects.filter(run=run).count()
    assert stopped_at < 12 and run.status == "running"  # nobody finished the run behind our back

    with FakeOpenAIServer(responder=responder(0.0)) as server:
        resumed = resume(
            run=run,
            key_env="D_FAKE_KEY",
            server=server,
            output=tmp_path / "resumed",
            extra=("--concurrency", "2", "--processes", "2"),
        )
    assert resumed["status"] == "finished" and resumed["pending"]["turns"] == 0
    assert TurnResult.objects.filter(run=run).count() == 12
