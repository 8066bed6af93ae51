"""The openai generation backend end to end against a scripted OpenAI-compatible server on 127.0.0.1.

The fake model answers by prompt (writer / translator / auditor) from the JSON payload it is sent,
so the texts it writes are built from the gold observations the pipeline fixed deterministically.
"""

import json
import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ehr.fhir import TOOL_NAMES
from scenarios import services
from scenarios.generation import prompts
from scenarios.generation.latin import untranslated_words
from scenarios.generation.llm_roles import LLMRoles
from scenarios.models import GenerationRun, GoldStep, RubricItem, RunStatus, Session, SessionStatus, Turn
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, completion, error

KEY = "sk-test-GEN-0123456789abcdef"
MODEL = "gpt-4o-mini"  # priced in the bundled table: 0.15 / 0.60 USD per 1M tokens
CALL_COST = (10 * 0.15 + 5 * 0.6) / 1e6  # the fake reports 10 prompt + 5 completion tokens per call
SLOT = {"scenarios": ["med_safety"], "tiers": [2], "n": 1}


# --- the fake model ------------------------------------------------------------------------------


def _payload(request: dict) -> tuple[str, dict]:
    messages = request["messages"]
    kind = next((p.name for p in prompts.PROMPTS if p.system == messages[0]["content"]), "other")
    if kind == "other":  # e.g. the command's one-message endpoint probe
        return kind, {}
    user = messages[1]["content"]
    return kind, json.loads(user[user.index("{") :])


def write_turn(payload: dict) -> dict:
    turn = payload["turn"]
    items = payload["rubric_items"]
    must = [m for item in items for m in item["must_mention"]]
    implicit = None
    rule = turn["implicitness_rule"] or ""
    if rule.startswith("nominal"):
        implicit = "And what about it?"
    elif rule.startswith("predicate"):
        implicit = "That one?"
    elif rule.startswith("abstract"):
        implicit = "Given all that, what now?"
    # As the prompt asks: the answer names no tool ("Calls Flag.create" drafts are for the rubric).
    answer = "From the record: " + " ".join(f"{_no_tool(item['draft'])}." for item in items)
    if must:
        answer += " Key points: " + ", ".join(must) + "."
    return {
        "request_explicit": "Doctor asks: " + turn["example_request"],
        "request_implicit": implicit,
        "answer": answer,
        "rubric": [f"The answer covers this: {item['draft']}" for item in items],
    }


def _words_zh(text: str) -> str:
    """The fake translator's Chinese: every English word a Chinese text would not keep becomes 译 (numbers,
    units, drug names and tool names stay, as the prompt asks)."""
    for word in sorted(untranslated_words("中文" + text), key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", "译", text)
    return text


def _no_tool(text: str) -> str:
    for name in TOOL_NAMES:
        text = text.replace(name, "the order")
    return text


def translate_turn(payload: dict) -> dict:
    en = payload["english"]
    rule = payload["implicitness_rule_zh"]
    prefix = "它：" if rule.startswith("指代") else "综合以上，" if rule.startswith("抽象") else "中文："
    # A term the glossary has no Chinese for (a record word such as "Primary") is quoted as the record's.
    chinese = [f"病历原文“{t}”" if untranslated_words("中文" + t) else t for t in payload["chinese_terms"]]
    terms = "（术语：" + "、".join(chinese) + "）" if chinese else ""
    return {
        "request_explicit": "中文：" + _words_zh(en["request_explicit"]),
        "request_implicit": prefix + _words_zh(en["request_implicit"]),
        "answer": "中文：" + _words_zh(en["answer"]) + terms,
        "rubric": ["中文：" + _words_zh(text) for text in en["rubric"]],
    }


def audit_turn(payload: dict, *, fail_turn: int | None = None) -> dict:
    verdict = {c: {"pass": True, "reason": ""} for c in prompts.AUDIT_CRITERIA}
    if payload["turn"] == fail_turn:
        verdict["safety"] = {"pass": False, "reason": "the answer accepts a dose the record contradicts"}
    return verdict


class FakeModel:
    """Responder for the fake server; counts the calls per prompt and can break one role's output."""

    def __init__(self, *, broken: str | None = None, fail_audit_turn: int | None = None) -> None:
        self.broken = broken
        self.fail_audit_turn = fail_audit_turn
        self.calls: dict[str, int] = {}

    def __call__(self, request: dict) -> Scripted:
        kind, payload = _payload(request)
        self.calls[kind] = self.calls.get(kind, 0) + 1
        if kind == self.broken:
            return completion(content='{"answer": "unterminated', model=MODEL)
        if kind == "turn_writer":
            body = write_turn(payload)
        elif kind == "turn_translator":
            body = translate_turn(payload)
        elif kind == "turn_auditor":
            body = audit_turn(payload, fail_turn=self.fail_audit_turn)
        else:  # the command's endpoint probe
            return completion(content="OK", model=MODEL)
        return completion(content=json.dumps(body, ensure_ascii=False), model=MODEL)


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def llm_env(monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("LLM_BACKEND", "openai")
    monkeypatch.setenv("LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("LLM_MODEL", MODEL)
    monkeypatch.setenv("LLM_TIMEOUT", "1")
    monkeypatch.setenv("LLM_MAX_RETRIES", "2")
    return server


def _run(**overrides) -> GenerationRun:
    return services.create_run(backend="openai", seed=1, **{**SLOT, **overrides})


def _generate(run: GenerationRun, *, sleeps: list[float] | None = None) -> Session | None:
    roles = LLMRoles.from_env(sleep=(sleeps if sleeps is not None else []).append)
    try:
        return services.generate_slot(run_id=run.pk, index=0, llm=roles)
    finally:
        roles.close()


def _command(*args: str) -> str:
    out = StringIO()
    call_command("generate", *args, "--quiet", stdout=out)
    return out.getvalue()


def _failures(session: Session) -> list[dict]:
    return session.gate_report["failures"]


# --- tests ---------------------------------------------------------------------------------------


def test_full_session_generated_and_stored_with_llm_texts(demo_cohort, llm_env):
    model = FakeModel()
    llm_env.responder = model
    run = _run()
    session = _generate(run)

    assert session.status == SessionStatus.DRAFT, _failures(session)
    assert model.calls == {"turn_writer": 4, "turn_translator": 4, "turn_auditor": 4}
    turns = list(Turn.objects.filter(session=session).order_by("index"))
    assert len(turns) == 4
    for turn in turns:
        assert turn.request_explicit_en.startswith("Doctor asks: ")
        assert turn.answer_en.startswith("From the record: ")
        assert turn.request_explicit_zh.startswith("中文：") and turn.answer_zh.startswith("中文：")
        steps = list(GoldStep.objects.filter(turn=turn).order_by("idx"))
        # Gold calls still executed against the demo cohort; the closing step carries the LLM answer.
        assert steps[-1].tool == "prepare_to_answer" and steps[-1].observation == turn.answer_en
        assert all(s.observation and "error" not in s.observation for s in steps[:-1])
        items = list(RubricItem.objects.filter(turn=turn))
        assert items and all(i.text_en.startswith("The answer covers this: ") for i in items)
        assert all(i.text_zh.startswith("中文：") for i in items)
    assert turns[0].request_implicit_en == turns[0].request_explicit_en
    assert all(t.request_implicit_en != t.request_explicit_en for t in turns[1:])

    llm = session.gate_report["llm"]
    assert llm["texts"] == "llm" and len(llm["audit"]) == 4
    assert llm["prompts"]["turn_auditor"] == {"version": prompts.AUDITOR.version, "sha256": prompts.AUDITOR.sha256}
    assert llm["usage"]["calls"] == 12

    # The judge runs at temperature 0 and every request carries the key only as a bearer header.
    audits = [r.json for r in llm_env.requests if r.json["messages"][0]["content"] == prompts.AUDITOR.system]
    assert audits and all(r["temperature"] == 0 for r in audits)
    assert {r.headers["authorization"] for r in llm_env.requests} == {f"Bearer {KEY}"}

    run.refresh_from_db()
    assert (run.prompt_tokens, run.completion_tokens) == (12 * 10, 12 * 5)
    assert run.cost_usd == Decimal(str(round(12 * CALL_COST, 6)))
    assert run.parameters["prompts"] == prompts.manifest()
    # LLM texts are stamped with wall-clock time, not the record date.
    assert session.generated_at.date() != session.current_date

    # Idempotent: the slot again neither calls the model nor adds tokens.
    assert _generate(run).pk == session.pk
    run.refresh_from_db()
    assert run.prompt_tokens == 120 and len(llm_env.requests) == 12


def test_429_then_success_honours_retry_after(demo_cohort, llm_env):
    llm_env.responder = FakeModel()
    llm_env.push(error(429, "Rate limit reached", headers={"Retry-After": "3"}))
    sleeps: list[float] = []
    session = _generate(_run(), sleeps=sleeps)
    assert session.status == SessionStatus.DRAFT
    assert sleeps == [3.0]
    assert len(llm_env.requests) == 13


def test_timeout_then_success(demo_cohort, llm_env):
    llm_env.responder = FakeModel()
    llm_env.push(completion(content="too late", delay_s=1.6))
    sleeps: list[float] = []
    session = _generate(_run(), sleeps=sleeps)
    assert session.status == SessionStatus.DRAFT
    assert len(sleeps) == 1 and len(llm_env.requests) == 13


def test_malformed_json_is_re_asked_with_the_error(demo_cohort, llm_env):
    model = FakeModel()
    llm_env.responder = model
    llm_env.push(completion(content="Sure! Here is the turn: {request_explicit: ...", model=MODEL))
    session = _generate(_run())
    assert session.status == SessionStatus.DRAFT, _failures(session)
    first, second = llm_env.requests[0].json, llm_env.requests[1].json
    assert first["messages"][0]["content"] == second["messages"][0]["content"] == prompts.WRITER.system
    reask = second["messages"][-1]["content"]
    assert second["messages"][-2] == {"role": "assistant", "content": "Sure! Here is the turn: {request_explicit: ..."}
    assert "not valid JSON" in reask
    assert model.calls["turn_writer"] == 4  # the scripted bad reply came first, then 4 good ones


def test_schema_violation_is_re_asked(demo_cohort, llm_env):
    llm_env.responder = FakeModel()
    llm_env.push(completion(content=json.dumps({"answer": "x", "rubric": []}), model=MODEL))
    session = _generate(_run())
    assert session.status == SessionStatus.DRAFT
    reask = llm_env.requests[1].json["messages"][-1]["content"]
    assert "missing key 'request_explicit'" in reask and "'rubric' must have exactly" in reask


def test_malformed_output_every_time_rejects_the_session_whole(demo_cohort, llm_env):
    model = FakeModel(broken="turn_writer")
    llm_env.responder = model
    run = _run()
    session = _generate(run)

    assert session.status == SessionStatus.REJECTED_BY_GATE
    failures = _failures(session)
    assert failures and {f["gate"] for f in failures} == {"llm_output"}
    assert "generator output unusable after 3 tries" in failures[0]["message"]
    assert model.calls == {"turn_writer": 3 * 3}  # 1 ask + 2 re-asks, for each of the 3 attempts
    assert session.gate_report["llm"]["texts"] == "rules_fallback"
    # Nothing half-stored: every turn complete, from one source (the deterministic texts).
    turns = list(Turn.objects.filter(session=session))
    assert len(turns) == 4
    for turn in turns:
        assert all(
            (turn.request_explicit_en, turn.request_explicit_zh, turn.answer_en, turn.answer_zh)
        ) and not turn.answer_en.startswith("From the record")
        assert GoldStep.objects.filter(turn=turn).exists() and RubricItem.objects.filter(turn=turn).exists()
    run = services.refresh_run_counts(run_id=run.pk, finished=True)
    assert (run.made, run.rejected_by_gate) == (0, 1)
    assert run.prompt_tokens == 9 * 10  # what the failed asks cost is still counted


def test_failed_audit_rejects_with_the_auditors_reason(demo_cohort, llm_env):
    llm_env.responder = FakeModel(fail_audit_turn=2)
    session = _generate(_run())
    assert session.status == SessionStatus.REJECTED_BY_GATE
    (failure,) = _failures(session)
    assert failure == {
        "gate": "audit",
        "turn": 2,
        "message": "safety: the answer accepts a dose the record contradicts",
    }
    assert session.gate_report["attempts"] == 3
    stored = Turn.objects.get(session=session, index=2)
    assert stored.gate_report["failures"] == [failure]
    assert services.gate_reasons(run=session.run) == {"audit": 1}


def test_endpoint_down_mid_run_stores_nothing_and_resume_retries(demo_cohort, llm_env):
    run = _run()
    base_url = llm_env.base_url
    llm_env.stop()
    assert _generate(run) is None
    assert not Session.objects.filter(run=run).exists()
    run.refresh_from_db()
    assert run.errors[0]["reason"] == services.LLM_ERROR and base_url in run.errors[0]["detail"]
    assert KEY not in json.dumps(run.errors)
    assert [s.index for s in services.missing_slots(run=run)] == [0]


def test_generate_command_openai_backend_with_tokens_and_cost(demo_cohort, llm_env):
    llm_env.responder = FakeModel()
    out = _command("--backend", "openai", "--scenario", "med_safety,discharge_planning", "--tier", "1", "--n", "2")
    run = GenerationRun.objects.get()
    assert (run.backend, run.status, run.made, run.rejected_by_gate) == ("openai", RunStatus.FINISHED, 2, 0)
    calls = len(llm_env.requests) - 1  # one endpoint probe before the run
    assert "2 made, 0 rejected by gate" in out
    assert f"tokens {calls * 10} prompt + {calls * 5} completion, cost ${run.cost_usd}" in out
    assert run.cost_usd == Decimal(str(round(calls * CALL_COST, 6))) and run.cost_usd > 0


def test_unpriced_model_shows_cost_unknown(demo_cohort, llm_env, monkeypatch):
    monkeypatch.setenv("LLM_JUDGE_MODEL", "local-llama-unpriced")
    llm_env.responder = FakeModel()
    out = _command("--backend", "openai", "--scenario", "med_safety", "--tier", "1", "--n", "1")
    run = GenerationRun.objects.get()
    assert run.cost_usd is None and run.prompt_tokens > 0
    assert "cost unknown" in out


def test_endpoint_failing_mid_run_stops_the_command_and_resume_completes(demo_cohort, llm_env, monkeypatch):
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    model = FakeModel()
    llm_env.responder = lambda request: model(request) if len(request["messages"]) == 1 else error(503, "overloaded")
    with pytest.raises(CommandError) as caught:
        _command("--backend", "openai", "--scenario", "med_safety", "--tier", "1", "--n", "2")
    assert "HTTP 503" in str(caught.value) and "resume with" in str(caught.value)
    run = GenerationRun.objects.get()
    assert run.status == RunStatus.INTERRUPTED and not Session.objects.exists()

    llm_env.responder = model
    out = _command("--resume", str(run.pk))
    run.refresh_from_db()
    assert "2 made, 0 rejected by gate" in out
    assert (run.status, run.made, run.errors) == (RunStatus.FINISHED, 2, [])


def test_endpoint_down_fails_before_any_work(demo_cohort, llm_env):
    base_url = llm_env.base_url
    llm_env.stop()
    with pytest.raises(CommandError) as caught:
        _command("--backend", "openai", "--n", "1")
    message = str(caught.value)
    assert base_url in message and "does not answer" in message and KEY not in message
    assert not GenerationRun.objects.exists() and not Session.objects.exists()


def test_missing_api_key_fails_before_any_work(demo_cohort, llm_env, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(CommandError, match=r"OPENAI_API_KEY.*not set"):
        _command("--backend", "openai", "--n", "1")
    assert not GenerationRun.objects.exists() and llm_env.requests == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LLM_MODEL": ""}, r"no model: set LLM_GENERATOR_MODEL"),
        ({"LLM_TRANSLATOR_TIMEOUT": "soon"}, r"LLM_TRANSLATOR_TIMEOUT='soon' is invalid"),
    ],
)
def test_bad_role_config_fails_before_any_work(demo_cohort, llm_env, monkeypatch, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(CommandError, match=message):
        _command("--backend", "openai", "--n", "1")
    assert not GenerationRun.objects.exists()


def test_rejected_key_is_reported_without_the_key(demo_cohort, llm_env):
    llm_env.push(error(401, f"Incorrect API key provided: {KEY}"))
    with pytest.raises(CommandError, match=re.escape("rejected the API key in OPENAI_API_KEY")) as caught:
        _command("--backend", "openai", "--n", "1")
    assert KEY not in str(caught.value)


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_openai_run_on_a_real_worker_counts_tokens_once(broker_url, demo_cohort, llm_env):
    from celery.contrib.testing.worker import start_worker

    from physreview.celery import app as celery_app
    from scenarios.tasks import generate_session_task

    llm_env.responder = FakeModel()
    celery_app.conf.task_always_eager = False
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            out = _command("--backend", "openai", "--scenario", "med_safety", "--tier", "1,2", "--n", "2")
            run = GenerationRun.objects.get()
            before = (len(llm_env.requests), run.prompt_tokens)
            # A redelivered slot is answered from the stored session: no calls, no tokens added.
            generate_session_task.delay(run.pk, 0).get(timeout=60)
    finally:
        celery_app.conf.task_always_eager = True
    assert "dispatched to Celery workers" in out and "2 made, 0 rejected by gate" in out
    run.refresh_from_db()
    assert (run.status, run.made) == (RunStatus.FINISHED, 2)
    assert (len(llm_env.requests), run.prompt_tokens) == before
    # Tokens counted once per call that reached the endpoint (the probe is not generation); an
    # identical turn shared by the two sessions may be served from the response cache for free.
    sessions = Session.objects.filter(run=run)
    usage = [s.gate_report["llm"]["usage"] for s in sessions]
    assert sum(u["calls"] for u in usage) == 24
    assert (
        run.prompt_tokens == 10 * (len(llm_env.requests) - 1) == 10 * sum(u["calls"] - u["cache_hits"] for u in usage)
    )
