"""Why generation rejected a session: per-gate reasons stored on the run, printed, and the exit status.

The openai-backend tests replay replies through the scripted fake server. Every non-ideal reply below is a
HAND-WRITTEN response shape (fenced JSON, prose before the object, keys in another case, a reply cut at the
output limit, a refusal, a server 500 on the model's output) modelled on how instruction models are known
to answer. None of it is recorded from a real model.
"""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from scenarios import services
from scenarios.generation import driver, reasons
from scenarios.generation.llm_json import JsonAnswer, normalize_keys, parse_json_object, unusable
from scenarios.generation.types import GateFailure, GenerationOutcome
from scenarios.models import GenerationRun, RunStatus, SessionStatus
from tests.fakes.openai_server import Scripted, completion, error
from tests.scenarios import test_generation_openai as openai_tests
from tests.scenarios.test_generation_openai import MODEL, FakeModel, _generate, _payload, _run

# The scripted server and the LLM_* environment of the openai-backend tests.
server = openai_tests.server
llm_env = openai_tests.llm_env

# --- parsing: accepted deviations and refused ones (unit) ----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"answer": "ok"}\n```',
        'Here is the JSON you asked for:\n\n```json\n{"answer": "ok"}\n```\nLet me know if you need more.',
        'Sure! {"answer": "ok"}',
        '{"answer": "ok"}\n\nNote: all values come from the observations.',
        '```\n{"answer": "ok"}\n```',
        '<think>The user wants {"answer": ...}; keep it short.</think>\n{"answer": "ok"}',
    ],
)
def test_common_wrappings_around_the_object_are_accepted(text):
    assert parse_json_object(text) == ({"answer": "ok"}, None)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"answer": "ok",}', "trailing comma before '}', line 1 column 17"),
        ('{"rubric": ["a", "b",]}', "trailing comma before ']'"),
        ('```json\n{"answer": "the INR is 3.', "Unterminated string starting at, line 2 column 12"),
        ("I'm sorry, but I can't help with that request.", "the model declined instead of answering: \"I'm sorry"),
        ("The INR is 3.1 and warfarin should be held.", "the reply has no JSON object; it reads 'The INR is 3.1"),
        ('["a", "b"]', "the reply is JSON list, not an object"),
        ("", "the reply is empty"),
        ("<think>Let me work out the INR trend first. The values are", "only a <think> block, without an answer"),
    ],
)
def test_other_deviations_are_refused_with_the_cause(text, reason):
    data, problem = parse_json_object(text)
    assert data is None and reason in problem


def test_keys_in_another_case_or_style_are_mapped_and_collisions_refused():
    schema = {"request_explicit": "str", "answer": "str", "safety": {"pass": "bool", "reason": "str?"}}
    value = {"Request_Explicit": "q", "ANSWER": "a", "Safety": {"Pass": True, "Reason": ""}}
    assert normalize_keys(value=value, schema=schema) == (
        {"request_explicit": "q", "answer": "a", "safety": {"pass": True, "reason": ""}},
        [],
    )
    assert normalize_keys(value={"requestExplicit": "q"}, schema=schema)[0] == {"request_explicit": "q"}
    _, problems = normalize_keys(value={"answer": "a", "Answer": "b"}, schema=schema)
    assert problems == ["keys 'answer' and 'Answer' both mean 'answer'"]


def test_summary_counts_attempts_per_gate_and_keeps_three_distinct_reasons():
    outcome = GenerationOutcome(
        "rejected_by_gate",
        None,
        3,
        rejected_attempts=[
            [GateFailure("untranslated", 1, "answer_zh keeps 'hold'"), GateFailure("untranslated", 2, "x " * 300)],
            [GateFailure("untranslated", 1, "answer_zh keeps 'hold'"), GateFailure("grounding", 0, "invented 7.5")],
            [GateFailure("untranslated", 3, "rubric_zh[0] keeps 'dose'"), GateFailure("untranslated", 0, "fourth")],
        ],
    )
    records = reasons.attempt_records(outcome=outcome, index=4)
    assert [(r["attempt"], r["gate"]) for r in records][:2] == [(1, "untranslated"), (1, "untranslated")]
    untranslated, grounding = reasons.summarize(rejections=records)
    assert (untranslated.gate, untranslated.attempts, untranslated.failures) == ("untranslated", 3, 5)
    first, long, third = untranslated.reasons  # the repeat on attempt 2 is not a new reason; "fourth" is cut
    assert first == "turn 1: answer_zh keeps 'hold'" and third == "turn 3: rubric_zh[0] keeps 'dose'"
    assert long.endswith("…") and len(long) <= reasons.SHOWN_CHARS
    assert (grounding.gate, grounding.attempts, grounding.reasons) == ("grounding", 1, ["turn 0: invented 7.5"])


# --- the openai backend against the scripted fake server -----------------------------------------


class ShapedModel(FakeModel):
    """The fake model, with one prompt's replies re-shaped by ``shape(json_text) -> Scripted``."""

    def __init__(self, *, kind: str, shape, **kwargs) -> None:
        super().__init__(**kwargs)
        self.kind, self.shape = kind, shape

    def __call__(self, request: dict) -> Scripted:
        reply = super().__call__(request)
        if _payload(request)[0] != self.kind:
            return reply
        return self.shape(reply.body["choices"][0]["message"]["content"])


def _prose_fenced_recased(text: str) -> Scripted:
    # Hand-written shape: prose, then a ```json fence, keys in Title_Case, a closing remark.
    body = {key.title(): value for key, value in json.loads(text).items()}
    fenced = f"Here is the turn as JSON:\n\n```json\n{json.dumps(body, indent=2)}\n```\nI kept every value."
    return completion(content=fenced, model=MODEL)


def _cut_at_length(text: str) -> Scripted:
    # Hand-written shape: the reply stops mid-string at the output limit.
    return completion(content=text[:40], finish_reason="length", completion_tokens=256, model=MODEL)


def _refusal_text(text: str) -> Scripted:
    return completion(content="I'm sorry, but I can't provide medical advice about specific patients.", model=MODEL)


def _refusal_field(text: str) -> Scripted:
    reply = completion(content=None, model=MODEL)
    reply.body["choices"][0]["message"]["refusal"] = "I can't assist with that request."
    return reply


def _server_500(text: str) -> Scripted:
    # llama.cpp's answer when the model's output breaks its parser: permanent, not retried by the client.
    return error(500, "Failed to parse input at pos 12: the model output is not valid JSON")


def test_fenced_json_with_prose_and_recased_keys_passes_without_a_reask(demo_cohort, llm_env):
    model = ShapedModel(kind="turn_writer", shape=_prose_fenced_recased)
    llm_env.responder = model
    run = _run()
    session = _generate(run)
    assert session.status == SessionStatus.DRAFT, session.gate_report["failures"]
    assert model.calls == {"turn_writer": 4, "turn_translator": 4, "turn_auditor": 4}  # no re-asks
    run.refresh_from_db()
    assert run.rejections == []


@pytest.mark.parametrize(
    ("shape", "reason"),
    [
        (
            _cut_at_length,
            "the reply was cut off at the output limit (finish_reason=length after 256 completion tokens; "
            "LLM_GENERATOR_MAX_TOKENS sets the limit)",
        ),
        (_refusal_text, "the model declined instead of answering: \"I'm sorry, but I can't provide medical"),
        (_refusal_field, 'the model refused: "I can\'t assist with that request."'),
        (_server_500, "the server rejected the model's output (HTTP 500"),
    ],
)
def test_unusable_writer_output_is_stored_per_attempt_with_its_cause(demo_cohort, llm_env, shape, reason):
    llm_env.responder = ShapedModel(kind="turn_writer", shape=shape)
    run = _run()
    session = _generate(run)
    assert session.status == SessionStatus.REJECTED_BY_GATE
    run.refresh_from_db()
    assert [(r["index"], r["attempt"], r["gate"], r["turn"]) for r in run.rejections] == [
        (0, 1, "llm_output", 0),
        (0, 2, "llm_output", 0),
        (0, 3, "llm_output", 0),
    ]
    message = run.rejections[0]["message"]
    assert message.startswith("generator output unusable after 3 tries: ") and reason in message
    # The session's own report says the same as the run.
    assert session.gate_report["failures"][0]["message"] == run.rejections[-1]["message"]


def test_truncated_reply_names_the_parse_position(demo_cohort, llm_env):
    llm_env.responder = ShapedModel(kind="turn_writer", shape=_cut_at_length)
    run = _run()
    _generate(run)
    run.refresh_from_db()
    assert "not valid JSON (Unterminated string starting at, line 1 column " in run.rejections[0]["message"]


def test_a_reask_that_fixes_the_reply_leaves_no_rejection(demo_cohort, llm_env):
    llm_env.responder = FakeModel()
    llm_env.push(completion(content='{"request_explicit": "q", "answer": "a",}', model=MODEL))
    run = _run()
    session = _generate(run)
    assert session.status == SessionStatus.DRAFT
    assert "trailing comma before '}'" in llm_env.requests[1].json["messages"][-1]["content"]
    run.refresh_from_db()
    assert run.rejections == []


# --- the command: summary, -v 2, exit status -----------------------------------------------------


def _command(*args: str) -> str:
    out = StringIO()
    call_command("generate", *args, "--quiet", stdout=out)
    return out.getvalue()


def test_command_prints_reasons_and_fails_when_fewer_sessions_were_made(demo_cohort, llm_env):
    llm_env.responder = ShapedModel(kind="turn_writer", shape=_cut_at_length)
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(
            "generate", "--backend", "openai", "--scenario", "med_safety", "--tier", "1,2", "--n", "2",
            "--quiet", "-v", "2", stdout=out,
        )  # fmt: skip
    text = out.getvalue()
    run = GenerationRun.objects.get()
    assert caught.value.returncode == 1
    message = str(caught.value)
    assert message.startswith("made 0 of 2 requested session(s): 2 rejected by gate (mostly llm_output: turn 0: ")
    assert "cut off at the output limit" in message and f"run {run.pk}" in message
    assert run.status == RunStatus.FINISHED and len(run.rejections) == 6
    assert "0 made, 2 rejected by gate" in text
    assert "why attempts were rejected (6 attempt(s) in 2 slot(s)), by gate:" in text
    assert "  llm_output: 6 attempt(s), 6 failure(s)" in text
    shown = [line for line in text.splitlines() if line.startswith("    - ")]
    assert 1 <= len(shown) <= 3 and all("finish_reason=length" in line for line in shown)
    per_attempt = [line for line in text.splitlines() if line.startswith("  slot ")]
    assert [line.split(":")[0] for line in per_attempt] == [
        f"  slot {i} attempt {a}" for i in (0, 1) for a in (1, 2, 3)
    ]


def test_without_v2_the_command_points_at_the_per_attempt_view(demo_cohort, llm_env):
    llm_env.responder = ShapedModel(kind="turn_writer", shape=_refusal_text)
    out = StringIO()
    with pytest.raises(CommandError, match=r"made 0 of 1 requested session\(s\): 1 rejected by gate"):
        call_command("generate", "--backend", "openai", "--scenario", "med_safety", "--tier", "1", "--n", "1",
                     "--quiet", stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "(every attempt: -v 2" in text and " attempt 1:" not in text
    assert "the model declined instead of answering" in text


def test_rules_run_keeps_the_reason_of_an_attempt_that_a_retry_fixed(demo_cohort, monkeypatch):
    real = driver.check_session

    def first_attempt_fails(draft):
        if draft.attempt == 0:
            return [GateFailure("grounding", 1, "answer_en has numbers not in the observations: 7.5")]
        return real(draft)

    monkeypatch.setattr(driver, "check_session", first_attempt_fails)
    out = _command("--backend", "rules", "--scenario", "med_safety", "--tier", "1", "--n", "1", "--seed", "4")
    run = GenerationRun.objects.get()
    assert (run.made, run.rejected_by_gate) == (1, 0)  # made what was asked: exit 0
    assert run.rejections == [
        {
            "index": 0,
            "attempt": 1,
            "gate": "grounding",
            "turn": 1,
            "message": "answer_en has numbers not in the observations: 7.5",
        }
    ]
    assert "  grounding: 1 attempt(s), 1 failure(s)" in out
    assert "    - turn 1: answer_en has numbers not in the observations: 7.5" in out


def test_rules_run_with_every_attempt_rejected_exits_non_zero(demo_cohort, monkeypatch):
    monkeypatch.setattr(driver, "check_session", lambda draft: [GateFailure("placeholder", 2, "answer_en has {x}")])
    with pytest.raises(CommandError, match=r"made 0 of 1 requested session\(s\): 1 rejected by gate \(mostly "):
        _command("--backend", "rules", "--scenario", "med_safety", "--tier", "1", "--n", "1", "--seed", "4")
    run = GenerationRun.objects.get()
    assert [r["attempt"] for r in run.rejections] == [1, 2, 3]
    assert services.gate_reasons(run=run) == {"placeholder": 1}


def test_the_gate_message_keeps_what_earlier_tries_got_wrong():
    answer = JsonAnswer(data=None, problems=["missing key 'answer'"], calls=3)
    answer.history = [["the reply is empty"], ["missing key 'answer'", "the reply is empty"], ["missing key 'answer'"]]
    assert unusable(role="translator", answer=answer) == (
        "translator output unusable after 3 tries: missing key 'answer' (earlier tries: the reply is empty)"
    )
