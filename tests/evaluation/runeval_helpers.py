"""Running ``runeval`` from the tests: in this process (its summary), or as a real ``manage.py runeval``
process against the test database and a scripted fake server (the kill -9 tests)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from tests.fakes.openai_server import completion, tool_call


def runeval_summary(output: Path, *args: str) -> dict:
    """``runeval *args --quiet --output output`` in this process; returns its ``summary.json``."""
    call_command("runeval", *args, "--quiet", "--output", str(output))
    return json.loads((output / "summary.json").read_text())


def resume(*, run, key_env: str, server, output: Path, extra: tuple[str, ...] = ()) -> dict:
    """``runeval --resume`` of ``run`` against ``server`` in this process; returns its summary."""
    return runeval_summary(
        output, "--resume", str(run.pk), "--api-key-env", key_env, "--base-url", server.base_url, *extra
    )


def responder(delay_s: float):
    """Each request: one EHR call and prepare_to_answer, then the answer (``delay_s`` per reply)."""

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


def runeval_env(*, key_env: str, tmp_path: Path, monkeypatch) -> dict[str, str]:
    """The child's environment (this test database, its own var dir, no broker, no response cache); the
    same key and cache setting for ``call_command`` in this process. The child opens the test database
    itself: PostgreSQL, or the SQLite test file (settings give SQLite tests a file, not memory)."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    elif connection.vendor == "sqlite" and not connection.is_in_memory_db():
        url = f"sqlite:///{Path(db['NAME']).resolve()}"
    else:
        pytest.skip(f"the killed process cannot open this test database ({connection.vendor} {db['NAME']})")
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PHYSREVIEW_VAR_DIR": str(tmp_path / "var"),
        key_env: "sk-fake-123456789",
        "LLM_MODEL_UNDER_TEST_CACHE": "false",
    }
    env.pop("CELERY_BROKER_URL", None)
    monkeypatch.setenv(key_env, "sk-fake-123456789")
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_CACHE", "false")
    return env


def start_runeval(*args: str, env: dict[str, str]) -> subprocess.Popen:
    """``manage.py runeval *args`` in a child process, output discarded."""
    return subprocess.Popen(
        [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "runeval", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
