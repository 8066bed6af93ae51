"""The ``openai`` generation backend: grounded skeleton from the rules builders, texts from an LLM.

What must stay grounded stays deterministic: the planner, the gold tool calls executed at the session
cutoff and their observations, the derivations and the machine-checkable rubric checks all come from
the rules builders. The LLM (role ``generator``) writes the English requests, gold answer and rubric
wording from that skeleton; role ``translator`` writes the Chinese; then the same deterministic gates
run, and role ``judge`` audits each turn (temperature 0, versioned prompt). Bad model output is re-asked
a few times and then counted as a gate failure (``llm_output``); nothing is half-written.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from core.llm import (
    LLMClient,
    LLMConfig,
    LLMConfigError,
    LLMError,
    LLMRequestError,
    UsageAccumulator,
    get_client,
    role_config,
)
from core.llm.config import display_url
from ehr.fhir import TOOL_NAMES
from scenarios.generation.common import PatientAnswer, fmt
from scenarios.generation.gates import _grounding, check_session
from scenarios.generation.llm_json import ask_json, unusable
from scenarios.generation.numbers import as_decimal, numbers, units
from scenarios.generation.planner import Candidate, plan_session
from scenarios.generation.prompts import (
    AUDIT_CRITERIA,
    AUDITOR,
    SUBTYPE_RULES_EN,
    SUBTYPE_RULES_ZH,
    TRANSLATOR,
    WRITER,
    manifest,
)
from scenarios.generation.session import build_session
from scenarios.generation.templates import AE_MARKERS_EN, AE_MARKERS_ZH, NA_PRONOUNS_EN, NA_PRONOUNS_ZH, PE_MAX_WORDS
from scenarios.generation.types import TASK_TYPES, GateFailure, GenerationOutcome, SessionDraft, TurnDraft

logger = logging.getLogger(__name__)

ROLES = ("generator", "translator", "judge")
MAX_REASKS = 2
OBSERVATION_MAX_CHARS = 8000  # per step in a prompt; the demo's largest observations are ~3k


@dataclass(frozen=True, kw_only=True)
class LLMRoles:
    """One client per role used by generation. Build with :meth:`from_env`; close when done."""

    generator: LLMClient
    translator: LLMClient
    judge: LLMClient

    @classmethod
    def from_env(
        cls, *, environ: Mapping[str, str] | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> LLMRoles:
        """Raises ``LLMConfigError`` (bad config, missing model or key) naming the variable.

        The run chose the openai backend, so the roles use it whatever ``LLM_<ROLE>_BACKEND`` says;
        the environment supplies model, base URL, key variable, timeouts.
        """
        clients = {
            role: get_client(
                config=role_config(role=role, environ=environ, backend="openai"), environ=environ, sleep=sleep
            )
            for role in ROLES
        }
        return cls(**clients)

    def models(self) -> dict[str, str]:
        return {role: getattr(self, role).config.model or "" for role in ROLES}

    def close(self) -> None:
        for role in ROLES:
            getattr(self, role).close()


class LLMSetupError(Exception):
    """The openai backend cannot start: configuration, API key or endpoint. The message says which."""


def check_llm_setup(*, environ: Mapping[str, str] | None = None, probe_timeout_s: float = 10.0) -> list[str]:
    """Before any work: every role's config is valid, its key variable is set and its endpoint answers.

    Returns one line per probed endpoint. The probe is one tiny uncached chat call per distinct
    (base URL, key variable, model), without retries. Raises :class:`LLMSetupError`; messages name
    the variable or the base URL, never the key.
    """
    env = os.environ if environ is None else environ
    try:
        configs = [role_config(role=role, environ=env, backend="openai") for role in ROLES]
    except LLMConfigError as exc:
        raise LLMSetupError(str(exc)) from None
    for config in configs:
        if not env.get(config.api_key_env, "").strip():
            raise LLMSetupError(
                f"LLM role {config.role!r} needs an API key in the environment variable {config.api_key_env}, "
                f"which is not set (choose another variable with LLM_{config.role.upper()}_API_KEY_ENV)."
            )
    lines: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for config in configs:
        key = (config.base_url, config.api_key_env, config.model or "")
        if key in seen:
            continue
        seen.add(key)
        lines.append(_probe(config=config, environ=env, timeout_s=min(config.timeout_s, probe_timeout_s)))
    return lines


def _probe(*, config: LLMConfig, environ: Mapping[str, str], timeout_s: float) -> str:
    where = f"LLM endpoint {display_url(config.base_url)} (role {config.role!r}, model {config.model!r})"
    probe = role_config(
        role=config.role, environ=environ, backend="openai", max_retries=0, timeout_s=timeout_s, cache=False
    )
    try:
        with get_client(config=probe, environ=environ) as client:
            client.chat(messages=[{"role": "user", "content": "Reply with the word OK."}], cache=False)
    except LLMRequestError as exc:
        if exc.status is None:
            raise LLMSetupError(
                f"{where} does not answer ({_kind(exc)}); check the base URL and that it runs."
            ) from None
        if exc.status in (401, 403):
            raise LLMSetupError(f"{where} rejected the API key in {config.api_key_env} (HTTP {exc.status}).") from None
        if exc.status == 404:
            raise LLMSetupError(f"{where} answered HTTP 404: check the base URL and the model name.") from None
        # Any other answer (400, 429, 5xx) means the endpoint is there; generation retries as configured.
        return f"{where}: answers (HTTP {exc.status} to the probe)"
    except LLMError as exc:
        raise LLMSetupError(f"{where}: {exc}") from None
    return f"{where}: answers"


def _kind(exc: LLMRequestError) -> str:
    return "timeout" if exc.kind == "timeout" else "connection error"


def generate_session_llm(
    *,
    scenario: str,
    tier: int,
    seed: int,
    index: int,
    patient_answer: PatientAnswer,
    llm: LLMRoles,
    max_attempts: int = 3,
    candidates: list[Candidate] | None = None,
    max_reasks: int = MAX_REASKS,
) -> GenerationOutcome:
    """Plan → rules skeleton → LLM texts → gates → audit, retried like the rules driver.

    ``outcome.llm`` carries the usage totals, prompt versions/hashes, models and audit verdicts.
    ``LLMRequestError``/``LLMResponseError`` (endpoint trouble, not model output) propagate.
    """
    usage = UsageAccumulator()
    report: dict[str, Any] = {"backend": "openai", "prompts": manifest(), "models": llm.models()}
    last: SessionDraft | None = None
    reasons: list[GateFailure] = []
    # Every rejected attempt's failures, in order: the stored and printed reasons of the run.
    rejected: list[list[GateFailure]] = []
    for attempt in range(max_attempts):
        plan = plan_session(
            scenario=scenario, tier=tier, seed=seed, index=index, candidates=candidates, attempt=attempt
        )
        if plan is None:
            reasons = [GateFailure("plan", None, f"no admission fits {scenario} tier {tier}")]
            return _outcome("no_candidate", None, attempt, reasons, report=report, usage=usage, rejected=rejected)
        try:
            skeleton = build_session(plan=plan, patient_answer=patient_answer)
        except Exception as exc:  # a builder bug rejects this attempt, not the run (as in the rules driver)
            logger.exception("building %s failed", plan.session_id)
            reasons = [GateFailure("build", None, f"{type(exc).__name__}: {exc}")]
            rejected.append(reasons)
            continue
        if structural := check_session(skeleton):
            # The grounded skeleton itself fails (e.g. an empty gold result): no text can fix that, so no tokens.
            skeleton.gate_failures = structural
            last, reasons = skeleton, structural
            report["texts"], report["audit"] = "rules_fallback", []
            rejected.append(reasons)
            continue
        # A new attempt is a new sample, not a cache hit on the last one; a re-run hits the cache.
        salt = f"attempt-{attempt}"
        draft, reasons = write_texts(skeleton=skeleton, llm=llm, usage=usage, max_reasks=max_reasks, salt=salt)
        report["texts"] = "rules_fallback" if reasons else "llm"
        report["audit"] = []
        if not reasons:
            reasons = check_session(draft)
        if not reasons:
            # The audit costs tokens: only drafts that passed every deterministic gate get one.
            reasons, report["audit"] = audit_session(
                draft=draft, llm=llm, usage=usage, max_reasks=max_reasks, salt=salt
            )
        draft.gate_failures = reasons
        last = draft
        if not reasons:
            return _outcome("passed", draft, attempt + 1, [], report=report, usage=usage, rejected=rejected)
        rejected.append(reasons)
    return _outcome("rejected_by_gate", last, max_attempts, reasons, report=report, usage=usage, rejected=rejected)


def _outcome(
    status: str,
    draft: SessionDraft | None,
    attempts: int,
    reasons: list[GateFailure],
    *,
    report: dict[str, Any],
    usage: UsageAccumulator,
    rejected: list[list[GateFailure]],
) -> GenerationOutcome:
    llm = {**report, "usage": usage.totals().as_dict()}
    return GenerationOutcome(status, draft, attempts, reasons, llm=llm, rejected_attempts=rejected)


# --- writing (generator + translator) --------------------------------------------------------------


def write_texts(
    *, skeleton: SessionDraft, llm: LLMRoles, usage: UsageAccumulator, max_reasks: int, salt: str = ""
) -> tuple[SessionDraft, list[GateFailure]]:
    """The skeleton with LLM texts in both languages, or the untouched skeleton and an ``llm_output`` failure.

    All-or-nothing per session: a draft never mixes LLM texts with rules texts.
    """
    draft = copy.deepcopy(skeleton)
    for turn in draft.turns:
        problem = _write_turn(draft=draft, turn=turn, llm=llm, usage=usage, max_reasks=max_reasks, salt=salt)
        if problem is not None:
            return skeleton, [GateFailure("llm_output", turn.index, problem)]
    return draft, []


def _write_turn(
    *, draft: SessionDraft, turn: TurnDraft, llm: LLMRoles, usage: UsageAccumulator, max_reasks: int, salt: str
) -> str | None:
    # Grounding pool before this turn's texts change: the planned requests, observations, derivations.
    pool = _grounding(draft, turn.index)
    items = [_planned_item(item) for item in turn.rubric]
    en = ask_json(
        client=llm.generator,
        prompt=WRITER,
        payload=_writer_payload(draft=draft, turn=turn, items=items),
        schema={"request_explicit": "str", "request_implicit": "str?", "answer": "str", "rubric": ("list", len(items))},
        validate=lambda data: _writer_problems(data=data, turn=turn, pool=pool, items=items),
        usage=usage,
        max_reasks=max_reasks,
        cache_salt=salt,
    )
    if en.data is None:
        return unusable(role="generator", answer=en)
    texts_en = {
        "request_explicit": en.data["request_explicit"].strip(),
        "request_implicit": (en.data.get("request_implicit") or "").strip() if turn.index else "",
        "answer": en.data["answer"].strip(),
        "rubric": [text.strip() for text in en.data["rubric"]],
    }
    if turn.index == 0:
        texts_en["request_implicit"] = texts_en["request_explicit"]
    zh_terms = _zh_terms(turn)
    zh = ask_json(
        client=llm.translator,
        prompt=TRANSLATOR,
        payload=_translator_payload(turn=turn, texts_en=texts_en, zh_terms=zh_terms),
        schema={"request_explicit": "str", "request_implicit": "str", "answer": "str", "rubric": ("list", len(items))},
        validate=lambda data: _translation_problems(data=data, texts_en=texts_en, turn=turn, zh_terms=zh_terms),
        usage=usage,
        max_reasks=max_reasks,
        cache_salt=salt,
    )
    if zh.data is None:
        return unusable(role="translator", answer=zh)
    turn.request_explicit_en, turn.request_implicit_en = texts_en["request_explicit"], texts_en["request_implicit"]
    turn.request_explicit_zh = zh.data["request_explicit"].strip()
    turn.request_implicit_zh = zh.data["request_implicit"].strip() if turn.index else turn.request_explicit_zh
    turn.answer_en, turn.answer_zh = texts_en["answer"], zh.data["answer"].strip()
    for item, text_en, text_zh in zip(turn.rubric, texts_en["rubric"], zh.data["rubric"], strict=True):
        item.text_en, item.text_zh = text_en, text_zh.strip()
    # The closing step's observation is the gold answer (released format).
    turn.steps[-1].observation = turn.answer_en
    return None


def _planned_item(item: Any) -> dict[str, Any]:
    check = item.check or {}
    must: list[str] = []
    if check.get("kind") == "value_unit":
        must.append(f"{fmt(check['value'])} {check.get('unit') or ''}".strip())
    elif check.get("kind") == "term" and check.get("en"):
        must.append(check["en"][0])
    return {"draft": item.text_en, "is_safety": item.is_safety, "must_mention": must, "check": item.check}


def _compact(observation: Any) -> Any:
    """An observation for a prompt: whole when small, else its JSON text cut (the cut is marked)."""
    text = observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False, default=str)
    if len(text) <= OBSERVATION_MAX_CHARS:
        return observation
    return text[:OBSERVATION_MAX_CHARS] + " …[truncated]"


def _calls(turn: TurnDraft) -> list[dict[str, Any]]:
    return [
        {"tool": s.tool, "arguments": s.arguments, "observation": _compact(s.observation)}
        for s in turn.steps
        if s.tool != "prepare_to_answer"
    ]


def _writer_payload(*, draft: SessionDraft, turn: TurnDraft, items: list[dict[str, Any]]) -> dict[str, Any]:
    rule = SUBTYPE_RULES_EN[turn.subtype].format(entity=turn.entity) if turn.subtype else None
    return {
        "session": {
            "scenario": draft.scenario,
            "tier": draft.tier,
            "tier_feature": draft.tier_feature,
            "environment": draft.env_info,
            "clinical_situation": draft.session_plan.get("clinical_situation"),
        },
        "earlier_turns": [
            {"turn": t.index, "request": t.request_explicit_en, "answer": t.answer_en}
            for t in draft.turns[: turn.index]
        ],
        "turn": {
            "index": turn.index,
            "task_type": TASK_TYPES[turn.task_type],
            "topic": turn.topic,
            "entity": turn.entity,
            "example_request": turn.request_explicit_en,
            "implicitness_rule": rule,
        },
        "tool_calls": _calls(turn),
        "derivations": [d.__dict__ for d in turn.derivations],
        "rubric_items": items,
    }


def _writer_problems(
    *, data: dict[str, Any], turn: TurnDraft, pool: set[Decimal], items: list[dict[str, Any]]
) -> list[str]:
    problems: list[str] = []
    explicit, implicit, answer = data["request_explicit"], data.get("request_implicit") or "", data["answer"]
    if turn.index:
        problems += _form_problems_en(turn=turn, explicit=explicit, implicit=implicit)
    for where, text in [("request_explicit", explicit), ("request_implicit", implicit), ("answer", answer)] + [
        (f"rubric[{i}]", t) for i, t in enumerate(data["rubric"])
    ]:
        if invented := sorted(numbers(text) - pool):
            problems.append(f"{where} has numbers not in the observations: {', '.join(map(str, invented))}")
    said = numbers(answer)
    for i, item in enumerate(items):
        check = item["check"] or {}
        if check.get("kind") == "value_unit":
            value = as_decimal(check["value"])
            tolerance = Decimal(str(check.get("tolerance") or 0))
            if value is not None and not any(abs(n - value) <= tolerance for n in said):
                problems.append(f"answer must mention {item['must_mention'][0]} (rubric item {i})")
        elif (
            check.get("kind") == "term"
            and check.get("en")
            and not any(term.lower() in answer.lower() for term in check["en"])
        ):
            problems.append(f"answer must mention {check['en'][0]!r} (rubric item {i})")
    return problems


def _words(text: str) -> list[str]:
    return [w.strip("?.,!:;").lower() for w in text.split()]


def _form_problems_en(*, turn: TurnDraft, explicit: str, implicit: str) -> list[str]:
    """The implicitness gates, asked before the gates run so that a re-ask can fix them."""
    if not implicit.strip():
        return ["request_implicit is required for this turn"]
    if implicit.strip() == explicit.strip():
        return ["request_implicit must differ from request_explicit"]
    if turn.subtype == "NA" and not set(_words(implicit)) & set(NA_PRONOUNS_EN):
        return [f"request_implicit must use one of the pronouns {', '.join(NA_PRONOUNS_EN)}"]
    if turn.subtype == "PE" and len(_words(implicit)) > PE_MAX_WORDS:
        return [f"request_implicit must have at most {PE_MAX_WORDS} words"]
    if turn.subtype == "AE" and not implicit.startswith(AE_MARKERS_EN):
        return ["request_implicit must start with 'Given all that'"]
    return []


def _zh_terms(turn: TurnDraft) -> list[str]:
    """Chinese terms the answer must use: the glossary terms of the turn's term checks."""
    terms = []
    for item in turn.rubric:
        check = item.check or {}
        if check.get("kind") == "term" and check.get("zh"):
            terms.append(check["zh"][0])
    return sorted(set(terms))


def _translator_payload(*, turn: TurnDraft, texts_en: dict[str, Any], zh_terms: list[str]) -> dict[str, Any]:
    rule = SUBTYPE_RULES_ZH[turn.subtype] if turn.subtype else "与 request_explicit 相同（首轮为明确提问）"
    return {
        "english": texts_en,
        "implicitness_rule_zh": rule,
        "chinese_terms": zh_terms,
        "tool_names_keep_as_is": sorted(n for n in TOOL_NAMES if any(n in str(v) for v in texts_en.values())),
    }


def _translation_problems(
    *, data: dict[str, Any], texts_en: dict[str, Any], turn: TurnDraft, zh_terms: list[str]
) -> list[str]:
    problems: list[str] = []
    pairs = [(key, texts_en[key], data[key]) for key in ("request_explicit", "request_implicit", "answer")]
    pairs += [
        (f"rubric[{i}]", en, zh) for i, (en, zh) in enumerate(zip(texts_en["rubric"], data["rubric"], strict=True))
    ]
    for where, en, zh in pairs:
        if lost := sorted(numbers(en) - numbers(zh)):
            problems.append(f"{where} lost numbers {', '.join(map(str, lost))}")
        if lost_units := sorted(units(en) - units(zh)):
            problems.append(f"{where} lost units {', '.join(lost_units)}")
        if lost_tools := [n for n in TOOL_NAMES if n in en and n not in zh]:
            problems.append(f"{where} must keep the tool names {', '.join(lost_tools)}")
    implicit = data["request_implicit"]
    if turn.subtype == "NA" and not any(p in implicit for p in NA_PRONOUNS_ZH):
        problems.append("request_implicit must use 它, 它们 or 他们")
    if turn.subtype == "AE" and not implicit.startswith(AE_MARKERS_ZH):
        problems.append("request_implicit must start with 综合以上")
    if missing := [t for t in zh_terms if t not in data["answer"]]:
        problems.append(f"answer must use the Chinese terms {', '.join(missing)}")
    return problems


# --- audit (judge) ---------------------------------------------------------------------------------

_VERDICT = {"pass": "bool", "reason": "str?"}


def audit_session(
    *, draft: SessionDraft, llm: LLMRoles, usage: UsageAccumulator, max_reasks: int, salt: str = ""
) -> tuple[list[GateFailure], list[dict[str, Any]]]:
    """Judge each turn on the four criteria; a failed criterion is a gate failure with the auditor's reason."""
    failures: list[GateFailure] = []
    verdicts: list[dict[str, Any]] = []
    for turn in draft.turns:
        answer = ask_json(
            client=llm.judge,
            prompt=AUDITOR,
            payload=_audit_payload(turn=turn),
            schema={criterion: _VERDICT for criterion in AUDIT_CRITERIA},
            validate=_audit_problems,
            usage=usage,
            max_reasks=max_reasks,
            temperature=0.0,
            cache_salt=salt,
        )
        if answer.data is None:
            problem = unusable(role="judge", answer=answer)
            failures.append(GateFailure("llm_output", turn.index, problem))
            verdicts.append({"turn": turn.index, "error": problem})
            continue
        verdicts.append({"turn": turn.index, **answer.data})
        for criterion in AUDIT_CRITERIA:
            verdict = answer.data[criterion]
            if not verdict["pass"]:
                failures.append(GateFailure("audit", turn.index, f"{criterion}: {verdict['reason'].strip()}"))
    return failures, verdicts


def _audit_problems(data: dict[str, Any]) -> list[str]:
    return [
        f"{criterion}.reason is required when pass is false"
        for criterion in AUDIT_CRITERIA
        if not data[criterion]["pass"] and not (data[criterion].get("reason") or "").strip()
    ]


def _audit_payload(*, turn: TurnDraft) -> dict[str, Any]:
    return {
        "turn": turn.index,
        "task_type": TASK_TYPES[turn.task_type],
        "request_explicit_en": turn.request_explicit_en,
        "request_implicit_en": turn.request_implicit_en,
        "request_explicit_zh": turn.request_explicit_zh,
        "request_implicit_zh": turn.request_implicit_zh,
        "tool_calls": _calls(turn),
        "derivations": [d.__dict__ for d in turn.derivations],
        "answer_en": turn.answer_en,
        "answer_zh": turn.answer_zh,
        "rubric": [{"en": r.text_en, "zh": r.text_zh, "is_safety": r.is_safety} for r in turn.rubric],
    }
