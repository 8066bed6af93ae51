"""kill -9 during a real runeval process, then --resume: same scores, no model call for finished turns."""

import os
import re
import signal
import time

import pytest

from evaluation.models import EvalRun, TurnResult
from tests.evaluation.conftest import make_sessions
from tests.evaluation.runeval_helpers import responder, resume, runeval_env, runeval_summary, start_runeval
from tests.fakes.openai_server import FakeOpenAIServer

_SESSION = re.compile(r"session_id: (\S+)")


def _turn_of(payload) -> tuple[str, int]:
    messages = payload["messages"]
    session_id = _SESSION.search(messages[0]["content"]).group(1)
    return session_id, sum(m["role"] == "user" for m in messages) - 1


@pytest.mark.slow
def test_kill_9_then_resume(transactional_db, demo_cohort, tmp_path, monkeypatch):
    env = runeval_env(key_env="H6_FAKE_KEY", tmp_path=tmp_path, monkeypatch=monkeypatch)
    make_sessions(n=3, seed=11)
    common = ["--model", "kill-model", "--api-key-env", "H6_FAKE_KEY", "--sessions", "all", "--quiet"]
    with FakeOpenAIServer(responder=responder(0.05)) as server:
        proc = start_runeval(*common, "--base-url", server.base_url, "--output", str(tmp_path / "killed"), env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and TurnResult.objects.filter(run__model="kill-model").count() < 5:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    run = EvalRun.objects.get(model="kill-model")
    finished = {(r.session_id, r.turn_index) for r in TurnResult.objects.filter(run=run)}
    assert 5 <= len(finished) < 12 and run.status == "running"

    with FakeOpenAIServer(responder=responder(0.0)) as server:
        resumed = resume(run=run, key_env="H6_FAKE_KEY", server=server, output=tmp_path / "resumed")
        asked = {_turn_of(r.json) for r in server.requests}
    assert asked and not asked & finished

    with FakeOpenAIServer(responder=responder(0.0)) as server:
        full = runeval_summary(tmp_path / "full", *common, "--base-url", server.base_url)
    assert TurnResult.objects.filter(run=run).count() == 12
    assert resumed["metrics"] == full["metrics"]
