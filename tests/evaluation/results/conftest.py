"""Finished runs of the built-in baselines over generated demo sessions (rules judge)."""

import json

import pytest
from django.core.management import call_command

from evaluation.models import EvalRun
from tests.annotations.conftest import make_user


def make_run(tmp_path, *args) -> tuple[EvalRun, dict]:
    out = tmp_path / "out"
    call_command("runeval", *args, "--quiet", "--output", str(out))
    summary = json.loads((out / "summary.json").read_text())
    return EvalRun.objects.get(pk=summary["run_id"]), summary


@pytest.fixture
def runs(sessions, tmp_path):
    """{"oracle": (run, summary), "heuristic": (run, summary)}, both languages, every session."""
    return {
        name: make_run(tmp_path / name, "--model", f"rules:{name}", "--language", "both", "--sessions", "all")
        for name in ("oracle", "heuristic")
    }


@pytest.fixture
def reviewer_client(client, db):
    # An adjudicator sees every turn of a run; a reviewer only their sessions' (tests/test_url_permissions.py).
    client.force_login(make_user("results_rev", "adjudicator"))
    return client
