"""What keeps runeval fast at high concurrency: worker processes, job order, the client's per-call work,
a keep-alive scripted server, and the bench's zero-overhead schedule."""

import http.client
import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from core.llm.toolnames import name_maps, outgoing
from evaluation.executors import auto_processes, execute_run_in_processes
from evaluation.jobs import longest_first
from evaluation.models import EvalRun, TurnResult
from scenarios.models import Session
from tests.evaluation.conftest import make_sessions
from tests.evaluation.test_runeval_openai import Script
from tests.fakes.openai_server import FakeOpenAIServer, completion, error


def _runeval(tmp_path, *args):
    call_command("runeval", *args, "--sessions", "all", "--quiet", "--output", str(tmp_path))
    return json.loads((tmp_path / "summary.json").read_text())


def _stored(run_id):
    rows = TurnResult.objects.filter(run_id=run_id).values_list(
        "session_id", "turn_index", "language", "passed", "scored", "infra_error"
    )
    return sorted(rows)


@pytest.mark.django_db(transaction=True)
def test_processes_store_the_same_results_as_threads(demo_cohort, tmp_path):
    make_sessions(n=4, seed=21)
    threads = _runeval(tmp_path / "t", "--model", "rules:heuristic", "--language", "both", "--concurrency", "4")
    procs = _runeval(
        tmp_path / "p", "--model", "rules:heuristic", "--language", "both", "--concurrency", "4", "--processes", "2"
    )
    assert procs["metrics"] == threads["metrics"]
    assert _stored(procs["run_id"]) == _stored(threads["run_id"])
    assert len(_stored(procs["run_id"])) > 0
    assert EvalRun.objects.get(pk=procs["run_id"]).status == "finished"


@pytest.mark.django_db(transaction=True)
def test_processes_with_the_openai_client_then_resume(demo_cohort, tmp_path, monkeypatch):
    """Forked processes get their own HTTP client; an infra error leaves the session for --resume."""
    make_sessions(n=3, seed=22)
    monkeypatch.setenv("H9_FAKE_KEY", "sk-fake-123456789")
    monkeypatch.setenv("LLM_MODEL_UNDER_TEST_MAX_RETRIES", "0")
    script = Script()
    broken = {"on": True}

    def responder(payload):
        # Every call of one session fails while ``broken`` is on.
        system = payload["messages"][0]["content"]
        if broken["on"] and f"session_id: {first_session}\n" in system:
            return error(500, "boom")
        return script(payload)

    with FakeOpenAIServer(responder=responder) as server:
        endpoint = ("--base-url", server.base_url, "--api-key-env", "H9_FAKE_KEY")
        args = ("--model", "fake-model", "--judge", "rules", "--concurrency", "4", "--processes", "2")
        dry = _runeval(tmp_path / "dry", "--model", "rules:oracle")
        first_session = EvalRun.objects.get(pk=dry["run_id"]).manifest["dataset"]["session_ids"][0]
        all_turns = TurnResult.objects.filter(run_id=dry["run_id"]).count()
        first_turns = TurnResult.objects.filter(run_id=dry["run_id"], session_id=first_session).count()
        with pytest.raises(CommandError, match=r"turns pending .* — runeval --resume"):  # a partial run
            _runeval(tmp_path / "a", *endpoint, *args)
        summary = json.loads((tmp_path / "a" / "summary.json").read_text())
        run = EvalRun.objects.get(pk=summary["run_id"])
        assert summary["errors"]["infra"] == {"http_500": 1} and summary["status"] == "partial"
        assert TurnResult.objects.filter(run=run).count() == all_turns - first_turns + 1
        kept = set(TurnResult.objects.filter(run=run, infra_error="").values_list("pk", flat=True))
        broken["on"] = False
        resumed = _runeval(tmp_path / "b", "--resume", str(run.pk), *endpoint, "--concurrency", "4", "--processes", "2")
    assert resumed["errors"]["infra_total"] == 0
    assert TurnResult.objects.filter(run=run).count() == all_turns
    assert kept <= set(TurnResult.objects.filter(run=run).values_list("pk", flat=True))  # not replayed
    assert EvalRun.objects.get(pk=run.pk).status == "finished"


@pytest.mark.django_db
def test_processes_refuse_an_open_transaction(sessions):
    from evaluation.agents.rules import rules_agent
    from evaluation.dataset import from_sessions
    from evaluation.judges.rules import RulesJudge
    from evaluation.services import RunOptions, create_run

    dataset = from_sessions(Session.objects.filter(pk__in=[s.pk for s in sessions]))
    agent, judge, options = rules_agent("rules:oracle"), RulesJudge(), RunOptions(concurrency=2)
    run = create_run(agent=agent, judge=judge, dataset=dataset, options=options, endpoint=None)
    with pytest.raises(RuntimeError, match="open transaction"):
        execute_run_in_processes(run=run, agent=agent, judge=judge, dataset=dataset, options=options, processes=2)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--processes", "2", "--workers", "celery", "--concurrency", "2"), "--workers local only"),
        (("--processes", "4", "--concurrency", "2"), "cannot exceed --concurrency"),
        (("--processes", "0"), "--processes must be at least 1"),
    ],
)
def test_processes_option_is_checked(tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        _runeval(tmp_path, "--model", "rules:oracle", *args)


def test_longest_sessions_start_first():
    short, long_, mid = (SimpleNamespace(n_turns=n, name=n) for n in (1, 5, 3))  # job entries (dataset.entries)
    todo = [(short, "en", "implicit", 0), (long_, "en", "implicit", 0), (mid, "en", "implicit", 0)]
    todo.append((long_, "zh", "implicit", 0))
    ordered = longest_first(todo)
    assert [(job[0].name, job[1]) for job in ordered] == [(5, "en"), (5, "zh"), (3, "en"), (1, "en")]


def test_outgoing_renames_names_without_changing_the_callers_objects():
    params = {"type": "object", "properties": {"code": {"type": "string"}}}
    tools = [{"type": "function", "function": {"name": "Observation.search", "parameters": params}}]
    call = {"id": "c1", "type": "function", "function": {"name": "Observation.search", "arguments": "{}"}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
    choice = {"type": "function", "function": {"name": "Observation.search"}}
    before = json.dumps([tools, messages, choice])
    to_api, _ = name_maps(tools=tools)
    out_messages, out_tools, out_choice = outgoing(messages=messages, tools=tools, tool_choice=choice, to_api=to_api)
    assert out_tools[0]["function"]["name"] == "Observation__search"
    assert out_messages[1]["tool_calls"][0]["function"]["name"] == "Observation__search"
    assert out_choice["function"]["name"] == "Observation__search"
    assert json.dumps([tools, messages, choice]) == before  # the caller's history and schemas are untouched
    assert out_tools[0]["function"]["parameters"] is params  # schemas are shared, not deep-copied per call
    assert outgoing(messages=messages, tools=None, tool_choice="none", to_api=to_api)[1:] == (None, "none")


def test_fake_server_keeps_the_connection_alive():
    with FakeOpenAIServer(responder=lambda payload: completion(content="ok")) as server:
        parts = urlsplit(server.base_url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        socks = []
        for _ in range(3):
            conn.request("POST", "/v1/chat/completions", body=b"{}", headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            assert response.status == 200 and json.loads(response.read())["choices"]
            assert response.version == 11 and not response.will_close
            socks.append(conn.sock)
        conn.close()
    assert socks[0] is socks[1] is socks[2]  # one TCP connection for all three calls
    assert len(server.requests) == 3


def _bench():
    path = Path(settings.BASE_DIR) / "bench" / "runeval_overhead.py"
    spec = importlib.util.spec_from_file_location("runeval_overhead_bench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_bench_ideal_is_the_zero_overhead_schedule():
    bound = _bench().schedule_bound
    # 324 four-turn sessions of 8 calls on 32 slots: 11 rounds of 1.6 s, not 2592 x 0.2 / 32 = 16.2 s.
    assert bound(job_calls=[8] * 324, latency_s=0.2, slots=32) == pytest.approx(17.6)
    assert bound(job_calls=[8] * 320, latency_s=0.2, slots=32) == pytest.approx(16.0)
    # One long session bounds the run however many slots are free.
    assert bound(job_calls=[40, 2, 2], latency_s=0.1, slots=8) == pytest.approx(4.0)


@pytest.mark.django_db
def test_processes_option_rejects_words(tmp_path):
    with pytest.raises(CommandError, match="--processes must be auto or a whole number, got 'two'"):
        _runeval(tmp_path, "--model", "rules:oracle", "--processes", "two")


@pytest.mark.parametrize(
    ("vendor", "in_atomic_block", "cpu_count", "concurrency", "expected"),
    [
        ("postgresql", False, 2, 32, 2),  # one per core
        ("postgresql", False, 16, 32, 4),  # at least 8 threads per process
        ("postgresql", False, 4, 8, 1),
        ("postgresql", False, 2, 1, 1),
        ("postgresql", True, 8, 64, 1),  # forked processes cannot see an open transaction
        ("sqlite", False, 8, 64, 1),  # one writer: processes would queue on the file lock
    ],
)
def test_auto_processes(vendor, in_atomic_block, cpu_count, concurrency, expected):
    database = SimpleNamespace(vendor=vendor, in_atomic_block=in_atomic_block)
    assert auto_processes(concurrency=concurrency, cpu_count=cpu_count, database=database) == expected


@pytest.mark.django_db
def test_a_job_commits_asynchronously_and_resets_the_setting_after(sessions):
    from django.db import connection

    from evaluation.agents.rules import rules_agent
    from evaluation.dataset import from_sessions
    from evaluation.jobs import run_job
    from evaluation.judges.rules import RulesJudge
    from evaluation.services import RunOptions, create_run

    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is a PostgreSQL setting")

    def setting():
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            return cursor.fetchone()[0]

    seen = []

    class RecordingJudge(RulesJudge):
        def judge(self, **kwargs):
            seen.append(setting())
            return super().judge(**kwargs)

    dataset = from_sessions(Session.objects.filter(pk=sessions[0].pk))
    agent, judge = rules_agent("rules:oracle"), RecordingJudge()
    run = create_run(agent=agent, judge=judge, dataset=dataset, options=RunOptions(), endpoint=None)
    before = setting()
    run_job(
        run=run,
        agent=agent,
        judge=judge,
        session=dataset.sessions[0],
        language="en",
        variant="implicit",
        trial=0,
        max_steps=16,
    )
    assert seen and set(seen) == {"off"}
    assert setting() == before == "on"
    assert TurnResult.objects.filter(run=run).count() == len(dataset.sessions[0].turns)
