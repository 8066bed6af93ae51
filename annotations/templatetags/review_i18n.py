"""Labels of stored codes in the UI language (the codes themselves stay as stored), and the readable
forms a physician sees instead of developer values: field keys, empty values, machine checks, numbering."""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from annotations.guidelines import render_markdown
from annotations.models import status_label
from core.text_templates import compile_template, parse_text
from ehr.fhir.params import WARNINGS as TOOL_WARNINGS
from scenarios.gate_messages import display_gate_message, parse_gate_message
from scenarios.models import Scenario
from scenarios.rubric_reasons import readable_code, value_text

register = template.Library()

# UI labels of the stored codes. Not the models' choices: TaskType's labels are PhysAssistBench's own
# wording, written verbatim into its JSONL, so they must stay English there.
SCENARIOS = {s.value: s.label for s in Scenario}  # scenarios.models.Scenario names them, for every screen
TASK_TYPES = {
    "IL": gettext_lazy("Information lookup"),
    "DG": gettext_lazy("Data gathering"),
    "CR": gettext_lazy("Clinical reasoning"),
    "WU": gettext_lazy("Write/update"),
}
VARIANTS = {"implicit": gettext_lazy("Implicit request"), "explicit": gettext_lazy("Explicit request")}
# A recorded agent step (evaluation.agent): a model call with tool calls, or the answer that ended the turn.
STAGES = {"step": gettext_lazy("Model step"), "final": gettext_lazy("Final answer")}
LANGUAGES = {"en": gettext_lazy("English"), "zh": gettext_lazy("Chinese")}
FIELDS = {
    "request_explicit": gettext_lazy("Request, explicit form"),
    "request_implicit": gettext_lazy("Request, implicit form"),
    "answer": gettext_lazy("Gold answer"),
    "subtype": gettext_lazy("Implicitness subtype"),
    "status": gettext_lazy("Status"),
    # The Chinese gold steps' prepare_to_answer observation, kept equal to the Chinese answer (issue 32).
    "answer_list_zh.observation": gettext_lazy("Gold answer summary of the Chinese steps (prepare_to_answer)"),
}
EMPTY = "—"
# The other stored codes a screen shows, by kind (the ``code_label`` filter's argument).
CODES: dict[str, dict[str, Any]] = {
    "scenario": SCENARIOS,
    "task_type": TASK_TYPES,
    "variant": VARIANTS,
    "stage": STAGES,
    "language": LANGUAGES,
    "subtype": {
        "NA": gettext_lazy("Nominal anaphora"),
        "PE": gettext_lazy("Predicate ellipsis"),
        "AE": gettext_lazy("Abstract/event anaphora"),
        # A run summary's slice of turns without a subtype (evaluation.metrics keys it str(None)).
        "None": gettext_lazy("No subtype"),
    },
    "tool_source": {
        "ehr": gettext_lazy("EHR tools"),
        "patient": gettext_lazy("Patient questions"),
        "mixed": gettext_lazy("EHR and patient"),
        "write": gettext_lazy("Write tools"),
    },
    # A tool's kind in a trace (ehr.fhir.params): the tool sources, plus the harness's own tools.
    "tool_kind": {
        "ehr": gettext_lazy("EHR tool"),
        "patient": gettext_lazy("patient question"),
        "write": gettext_lazy("write tool"),
        "control": gettext_lazy("control tool"),
        "unknown": gettext_lazy("unknown tool"),
    },
    "workup_mode": {"parallel": gettext_lazy("Parallel work-up"), "adaptive": gettext_lazy("Adaptive work-up")},
    # How an agent turn ended (evaluation.agent, evaluation.protocols.release).
    "end_reason": {
        "answer": gettext_lazy("the answer"),
        "empty_answer": gettext_lazy("an empty answer"),
        "step_limit": gettext_lazy("the step limit"),
        "prepare_to_answer": gettext_lazy("the request to answer now"),
        "model_error": gettext_lazy("model output the server could not parse"),
        "infra_error": gettext_lazy("an infrastructure error"),
    },
    # Why a tool call was not run.
    "skipped": {"step_limit": gettext_lazy("not run: step limit reached")},
    "replay": {
        "hit": gettext_lazy("replayed"),
        "miss": gettext_lazy("replay miss"),
        "live": gettext_lazy("live patient"),
    },
    # TurnResult.infra_error (evaluation.agents.llm); ``http_<status>`` is worded by code_label.
    "infra_error": {
        "timeout": gettext_lazy("endpoint timeout"),
        "connection": gettext_lazy("connection error"),
        "malformed_response": gettext_lazy("malformed endpoint response"),
    },
    "run_status": {
        "running": gettext_lazy("running"),
        "finished": gettext_lazy("finished"),
        "partial": gettext_lazy("partial"),
        "failed": gettext_lazy("failed"),
        "interrupted": gettext_lazy("interrupted"),
    },
    # Slices of a run summary (evaluation.metrics) and of the calibration agreement table.
    "dimension": {
        "language": gettext_lazy("Language"),
        "scenario": gettext_lazy("Scenario"),
        "tier": gettext_lazy("Tier"),
        "task_type": gettext_lazy("Task type"),
        "subtype": gettext_lazy("Subtype"),
        "tool_source": gettext_lazy("Tool source"),
        "variant": gettext_lazy("Variant"),
        "item": gettext_lazy("Rubric item"),
        "all": gettext_lazy("all"),
    },
    "item_kind": {
        "safety": gettext_lazy("safety"),
        "non-safety": gettext_lazy("non-safety"),
        "all": gettext_lazy("all"),
    },
    "persona_key": {
        "health_literacy": gettext_lazy("health literacy"),
        "adherence": gettext_lazy("adherence"),
        "anxiety_level": gettext_lazy("anxiety level"),
        "info_completeness": gettext_lazy("information given"),
        "critical_triggers": gettext_lazy("reveals the critical fact when asked about"),
    },
    "persona_value": {
        "low": pgettext_lazy("patient persona", "low"),
        "medium": pgettext_lazy("patient persona", "medium"),
        "high": pgettext_lazy("patient persona", "high"),
        "good": pgettext_lazy("patient persona", "good"),
        "partial": pgettext_lazy("patient persona", "partial"),
        "poor": pgettext_lazy("patient persona", "poor"),
        "full": pgettext_lazy("patient persona", "full"),
        "critical_withheld": pgettext_lazy("patient persona", "withholds a critical fact"),
    },
}
# A run's protocol settings (evaluation.protocols.ProtocolSettings), on the run page.
CODES["protocol_setting"] = {
    "literacy": gettext_lazy("patient literacy"),
    "bounds": gettext_lazy("record bounds"),
    "max_steps": gettext_lazy("step limit"),
    "temperature": gettext_lazy("temperature"),
    "max_tokens": gettext_lazy("output token limit"),
    "observations": gettext_lazy("observations"),
    "judge_mode": gettext_lazy("judge mode"),
    "patient_replay": gettext_lazy("patient replies"),
    "prompt_hash": gettext_lazy("judge prompt hash"),
}
CODES["protocol_value"] = {
    "low": pgettext_lazy("protocol setting", "low"),
    "medium": pgettext_lazy("protocol setting", "medium"),
    "high": pgettext_lazy("protocol setting", "high"),
    "strict": pgettext_lazy("protocol setting", "strict"),
    "release": pgettext_lazy("protocol setting", "as released"),
    "json": pgettext_lazy("protocol setting", "JSON"),
    "compact": pgettext_lazy("protocol setting", "compact text"),
    "rules": pgettext_lazy("protocol setting", "rules judge"),
    "physreview": pgettext_lazy("protocol setting", "PhysReview"),
    "arguments": pgettext_lazy("protocol setting", "replayed by arguments"),
    "order": pgettext_lazy("protocol setting", "replayed in call order"),
    "live": pgettext_lazy("protocol setting", "live patient"),
}
# Quality gates (scenarios.generation.gates*, annotations.services.gates), in the review screen's warnings.
CODES["gate"] = {
    "tool_result": gettext_lazy("tool results"),
    "tool_count": gettext_lazy("number of tool calls"),
    "numbers": gettext_lazy("numbers grounded in the record"),
    "rubric": gettext_lazy("rubric"),
    "rubric_count": gettext_lazy("number of rubric items"),
    "translation": gettext_lazy("translation"),
    "tool_names": gettext_lazy("tool names"),
    "tool_contract": gettext_lazy("tool contract"),
    "subtype": gettext_lazy("implicitness subtype"),
    "tool_source": gettext_lazy("tool source"),
    "workup_mode": gettext_lazy("work-up mode"),
    "arc": gettext_lazy("session arc"),
    "date_cutoff": gettext_lazy("date cutoff"),
    "placeholder": gettext_lazy("placeholder text"),
    "untranslated": gettext_lazy("untranslated English"),
    "machine_text": gettext_lazy("machine wording"),
    "self_rubric": gettext_lazy("answer against its own rubric"),
    "evidence": gettext_lazy("answer against the current gold evidence"),
}
CODES["judge"] = {
    "rules": gettext_lazy("rules judge"),
    "rules (compiled)": gettext_lazy("rules judge, compiled checks"),
}
JOINED = frozenset({"language", "variant"})
_HTTP = re.compile(r"^http_(\d{3})$")
# Values a slice's entries are keyed by, per dimension (a tier is "1": shown as L1).
_SLICE_VALUES = {"language": "language", "scenario": "scenario", "task_type": "task_type", "subtype": "subtype"}
_SLICE_VALUES |= {"tool_source": "tool_source", "variant": "variant", "item": "item_kind", "all": "item_kind"}
# Generation bookkeeping, not what the patient is like (kept in the JSON, not shown as persona).
PERSONA_HIDDEN = frozenset({"seed", "critical_fact_id"})


def label_of(*, kind: str, code: Any) -> str:
    """The UI label of a stored code of ``kind`` (a key of ``CODES``); an unknown code as words, never raw.

    Judge names are names (a model's): an unknown one stays as it is. ``en+zh`` (a run's languages or
    variants) is labelled part by part."""
    if code is None or code == "":
        return EMPTY
    label = CODES.get(kind, {}).get(str(code))
    if label is not None:
        return str(label)
    if kind == "judge":
        return str(code)
    if kind in JOINED and "+" in str(code):
        return " + ".join(label_of(kind=kind, code=part) for part in str(code).split("+"))
    http = _HTTP.match(str(code)) if kind == "infra_error" else None
    if http:
        return _("endpoint HTTP error %(status)s") % {"status": http.group(1)}
    return readable_code(code)


@register.filter
def code_label(value: Any, kind: str) -> str:
    """``{{ call.kind|code_label:"tool_kind" }}``: one filter for every code table above."""
    return label_of(kind=kind, code=value)


@register.filter
def gate_message(text: Any) -> str:
    """A stored quality-gate message in the UI language; one of no known shape (an LLM audit's words) as
    it is, marked as English."""
    if parse_gate_message(text) is None:
        return format_html('<span lang="en">{}</span>', "" if text is None else text)
    return display_gate_message(text, label=label_of)


_TOOL_WARNINGS = {
    key: compile_template(template, param_patterns={"name": r"[^']*", "target": r"[^']*", "params": r".*"})
    for key, template in TOOL_WARNINGS.items()
}


@register.filter
def tool_warning(text: Any) -> str:
    """What the tool layer did to fit a model's call to the contract, in the UI language (the model read it
    in English); a text of no known shape as it is."""
    parsed = parse_text(str(text or ""), patterns=_TOOL_WARNINGS)
    return _(TOOL_WARNINGS[parsed[0]]) % parsed[1] if parsed else str(text or "")


@register.filter
def slice_value(value: Any, dimension: str) -> str:
    """A slice entry's value under its dimension: ``"1"`` of ``tier`` → "L1", ``"CR"`` of ``task_type`` → label."""
    if dimension == "tier":
        return f"L{value}"
    if dimension == "task_type":
        return task_type_label(value)
    kind = _SLICE_VALUES.get(dimension)
    return label_of(kind=kind, code=value) if kind else str(value)


@register.filter
def persona_text(persona: Any) -> str:
    """A persona dict as "health literacy: low · anxiety level: high" in the UI language ("—" when empty)."""
    if not isinstance(persona, dict):
        return EMPTY
    parts = []
    for key, value in persona.items():
        if key in PERSONA_HIDDEN or value in (None, "", [], {}):
            continue
        if isinstance(value, str):
            shown = label_of(kind="persona_value", code=value)
        elif isinstance(value, list | tuple):
            shown = ", ".join(str(v) for v in value)
        else:
            shown = value_text(value)
        parts.append(f"{label_of(kind='persona_key', code=key)}: {shown}")
    return " · ".join(parts) or EMPTY


@register.filter
def turn_status(value: str) -> str:
    """``needs_adjudication`` → "Needs adjudication" (or its translation); unknown codes as they are."""
    return status_label(value)


@register.filter
def scenario_label(value: str) -> str:
    return str(SCENARIOS.get(value, value))


@register.filter
def variant_label(value: str) -> str:
    return str(VARIANTS.get(value, value or EMPTY))


@register.filter
def stage_label(value: str) -> str:
    return str(STAGES.get(value, value or EMPTY))


@register.filter
def task_type_label(value: str) -> str:
    """``CR`` → "Clinical reasoning (CR)": the code stays visible, physicians know both."""
    label = TASK_TYPES.get(value)
    return f"{label} ({value})" if label else (value or EMPTY)


@register.filter
def human_number(idx: Any) -> Any:
    """A stored 0-based index as people count it (rubric item 0 → 1); every screen uses this one numbering."""
    return idx + 1 if isinstance(idx, int) else idx


_FIELD = re.compile(r"^(rubric|steps)\.(\d+)\.(\w+)$")


def _lang_suffix(name: str) -> tuple[str, str]:
    for code, label in LANGUAGES.items():
        if name.endswith(f"_{code}"):
            return name.removesuffix(f"_{code}"), f" ({label})"
    return name, ""


@register.filter
def field_label(key: str) -> str:
    """``rubric.4.text_en`` → "Rubric item 5 (English)", ``steps.1.arguments`` → "Tool call 2: arguments",
    ``answer_zh`` → "Gold answer (Chinese)"; unknown keys as they are."""
    match = _FIELD.match(key or "")
    if match:
        kind, idx, name = match.group(1), int(match.group(2)) + 1, match.group(3)
        base, lang = _lang_suffix(name)
        if kind == "rubric":
            what = (
                ""
                if base == "text"
                else {"is_safety": _("safety flag"), "machine_check": _("machine check")}.get(base, base)
            )
            head = _("Rubric item %(n)s") % {"n": idx}
            return f"{head}{': ' + str(what) if what else ''}{lang}"
        what = {"arguments": _("arguments"), "observation": _("result")}.get(base, base)
        return _("Tool call %(n)s: %(what)s") % {"n": idx, "what": what}
    base, lang = _lang_suffix(key or "")
    label = FIELDS.get(base)
    return f"{label}{lang}" if label else key


@register.filter
def or_dash(value: Any) -> Any:
    """None, "" and empty lists/dicts as "—" (never ``None`` or ``[]`` on a screen)."""
    return EMPTY if value is None or value == "" or (isinstance(value, list | dict | tuple) and not value) else value


def _phrases(values: Any) -> str:
    return ", ".join(f"“{v}”" for v in values or [])


@register.filter
def check_sentence(check: Any) -> str:
    """A rubric item's machine check as a sentence ("value 0.9 mg/dL ± 0.05"); the JSON stays behind a <details>."""
    if not isinstance(check, dict) or not check.get("kind"):
        return EMPTY
    kind = check["kind"]
    if kind == "all_of":
        parts = "; ".join(check_sentence(part) for part in check.get("checks") or [])
        return _("all of: %(parts)s") % {"parts": parts}
    if kind == "value_unit":
        tolerance = check.get("tolerance") or 0
        text = _("value %(value)s %(unit)s") % {"value": check.get("value"), "unit": check.get("unit") or ""}
        return f"{text.strip()} ± {tolerance}" if tolerance else text.strip()
    if kind == "term":
        return _("mentions any of %(phrases)s") % {"phrases": _phrases([*check.get("en", []), *check.get("zh", [])])}
    if kind == "must_not_recommend":
        phrases = _phrases([*check.get("en", []), *check.get("zh", [])])
        return _("does not recommend %(phrases)s") % {"phrases": phrases}
    if kind == "write_call":
        params = "; ".join(
            f"{k} = {v if isinstance(v, str) else value_text(v)}" for k, v in (check.get("params") or {}).items()
        )
        text = _("calls %(tool)s") % {"tool": check.get("tool", "")}
        return _("%(call)s with %(params)s") % {"call": text, "params": params} if params else text
    return str(kind)


@register.filter
def markdown_html(text: str) -> SafeString:
    """Markdown (a dataset card, written by the app or an admin) as cleaned HTML (nh3 allow-list); a card's
    YAML header for dataset hubs is not part of what people read (the page shows it in the source)."""
    from annotations.snapshots.card import split_front_matter

    return render_markdown(split_front_matter(text or "")[1])
