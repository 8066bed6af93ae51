"""kill -9 during a real runeval process, then --resume: same scores, no model call for finished turns."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from evaluation.models import EvalRun, TurnResult
from tests.evaluation.conftest import make_sessions
from tests.fakes.openai_server import FakeOpenAIServer, completion, tool_call

_SESSION = re.compile(r"session_id: (\S+)")


def _responder(delay_s: float):
    def respond(payload):
        if payload.get("tool_choice") == "none":
            return completion(content="Creatinine 1.4 mg/dL.", delay_s=delay_s)
        if payload["messages"][-1]["role"] == "user":
            calls = [
                tool_call(name="Observation__search", arguments={"code": "creatinine"}),
                tool_call(name="prepare_to_answer", arguments={}),
            ]
            return completion(tool_calls=calls, delay_s=delay_s)
        return completion(content="done", delay_s=delay_s)

    return respond


def _turn_of(payload) -> tuple[str, int]:
    messages = payload["messages"]
    session_id = _SESSION.search(messages[0]["content"]).group(1)
    return session_id, sum(m["role"] == "user" for m in messages) - 1


@pytest.mark.slow
def test_kill_9_then_resume(transactional_db, demo_cohort, tmp_path, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("the killed process must share the test database (PostgreSQL only)")
    make_sessions(n=3, seed=11)
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "PHYSREVIEW_VAR_DIR": str(tmp_path / "var"),
        "H6_FAKE_KEY": "sk-fake-123456789",
        "LLM_MODEL_UNDER_TEST_CACHE": "false",
    }
    env.pop("CELERY_BROKER_URL", None)
    monkeypatch.setenv("H6_FAKE_KEY", "sk-fake-123456789")
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_CACHE", "false")
    common = ["--model", "kill-model", "--api-key-env", "H6_FAKE_KEY", "--sessions", "all", "--quiet"]
    with FakeOpenAIServer(responder=_responder(0.05)) as server:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(Path(settings.BASE_DIR) / "manage.py"),
                "runeval",
                *common,
                "--base-url",
                server.base_url,
                "--output",
                str(tmp_path / "killed"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and TurnResult.objects.filter(run__model="kill-model").count() < 5:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    run = EvalRun.objects.get(model="kill-model")
    finished = {(r.session_id, r.turn_index) for r in TurnResult.objects.filter(run=run)}
    assert 5 <= len(finished) < 12 and run.status == "running"

    with FakeOpenAIServer(responder=_responder(0.0)) as server:
        call_command(
            "runeval",
            "--resume",
            str(run.pk),
            "--api-key-env",
            "H6_FAKE_KEY",
            "--base-url",
            server.base_url,
            "--quiet",
            "--output",
            str(tmp_path / "resumed"),
        )
        asked = {_turn_of(r.json) for r in server.requests}
    assert asked and not asked & finished
    resumed = json.loads((tmp_path / "resumed" / "summary.json").read_text())

    with FakeOpenAIServer(responder=_responder(0.0)) as server:
        call_command("runeval", *common, "--base-url", server.base_url, "--output", str(tmp_path / "full"))
    full = json.loads((tmp_path / "full" / "summary.json").read_text())
    assert TurnResult.objects.filter(run=run).count() == 12
    assert resumed["metrics"] == full["metrics"]
