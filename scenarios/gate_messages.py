"""Messages of the quality gates (:mod:`scenarios.generation.gates`, :mod:`~scenarios.generation.gates_content`)
as a key and its params, and back.

A failure's message is stored in English (generation reports, a review's ``gate_warnings``) and written by
:func:`gate_message` from the templates below, which are also the gettext msgids. :func:`display_gate_message`
reads a stored message back to its template and shows it in the UI language, with the field it names
("rubric item 2 (zh)") and the placeholder it found translated too. Details quoted from elsewhere (a tool's
error, a rubric check's validation message) and the texts the gate quotes stay as they are.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop, pgettext

from core.text_templates import compile_template, parse_text

# Where in a turn a failure is: the field or the gold step.
WHERE: dict[str, str] = {
    "explicit_zh": gettext_noop("explicit request (zh)"),
    "implicit_zh": gettext_noop("implicit request (zh)"),
    "explicit": gettext_noop("explicit request"),
    "implicit": gettext_noop("implicit request"),
    "answer_zh": gettext_noop("answer (zh)"),
    "answer": gettext_noop("answer"),
    "rubric_zh": gettext_noop("rubric item %(n)s (zh)"),
    "rubric": gettext_noop("rubric item %(n)s"),
    "step": gettext_noop("step %(idx)s %(tool)s"),
}

# key -> English template. Order matters when reading back: a more specific shape before a looser one.
MESSAGES: dict[str, str] = {
    # tool results and counts
    "tool_error": gettext_noop("step %(idx)s %(tool)s returned an error: %(error)s"),
    "empty_bundle": gettext_noop("step %(idx)s %(tool)s returned an empty Bundle"),
    "returned_nothing": gettext_noop("step %(idx)s %(tool)s returned nothing"),
    "last_step": gettext_noop("the last step must be prepare_to_answer"),
    "il_calls": gettext_noop("IL needs exactly 1 EHR call, got %(kinds)s"),
    "dg_calls": gettext_noop("DG needs 2-4 calls, got %(count)s"),
    "cr_calls": gettext_noop("CR needs at least one fetched value"),
    "wu_calls": gettext_noop("WU needs exactly one write call, got %(kinds)s"),
    "must_not_write": gettext_noop("%(task_type)s must not write"),
    "unknown_tool": gettext_noop("unknown tool in %(tools)s"),
    # rubric
    "rubric_count": gettext_noop("%(task_type)s needs %(low)s-%(high)s items, got %(count)s"),
    "no_text": gettext_noop("%(where)s lacks a text"),
    "wu_rubric": gettext_noop("WU rubric must check the write call"),
    "checked_value": gettext_noop("%(where)s: checked value %(value)s ungrounded"),
    "ungrounded": gettext_noop("%(where)s: %(numbers)s not in any observation"),
    "self_rubric": gettext_noop("%(where)s (“%(text)s”): the %(lang)s gold answer fails its check"),
    # answer ↔ evidence (scenarios.audit.evidence): what the answer cites and the gold call it came from
    "stale_value": gettext_noop(
        "%(where)s: %(value)s is no longer supported by step %(idx)s %(tool)s, whose result changed"
    ),
    "stale_name": gettext_noop(
        "%(where)s: %(value)s is no longer returned by step %(idx)s %(tool)s, whose result changed"
    ),
    "lab_value": gettext_noop("%(where)s: %(value)s is not among the %(name)s results of step %(idx)s %(tool)s"),
    # translation
    "zh_missing": gettext_noop("%(where)s: Chinese text missing"),
    "zh_numbers": gettext_noop("%(where)s: ZH lacks numbers %(numbers)s"),
    "zh_units": gettext_noop("%(where)s: ZH lacks units %(units)s"),
    "tool_name_lost": gettext_noop("%(where)s: tool name translated or lost: %(tools)s"),
    "unknown_write_tool": gettext_noop("%(where)s: unknown tool “%(tool)s”"),
    "untranslated": gettext_noop("%(where)s: English in the Chinese text: %(words)s"),
    # session arc, implicitness, tool source, tier
    "arc_protocol": gettext_noop("arc %(arc)s breaks the protocol"),
    "arc_sequence": gettext_noop("sequence_idx %(sequence)s does not match arc %(arc)s"),
    "turn0_explicit": gettext_noop("turn 0 must be explicit"),
    "needs_subtype": gettext_noop("turn needs an implicitness subtype, got %(subtype)s"),
    "implicit_equals": gettext_noop("implicit request equals the explicit one"),
    "na_unseen": gettext_noop("NA refers to “%(entity)s”, not established earlier"),
    "na_pronoun": gettext_noop("NA rewrite has no anaphoric pronoun"),
    "pe_long": gettext_noop("PE rewrite is not elliptic (%(count)s words)"),
    "ae_marker": gettext_noop("AE rewrite does not open with an abstract anaphor"),
    "tool_source": gettext_noop("tool_source %(source)s but calls are %(kinds)s"),
    "workup_mode": gettext_noop("workup_mode %(mode)s does not match the steps"),
    "l2_kind": gettext_noop("L2 needs a trend, a formula or a drug-lab threshold turn"),
    "l3_kind": gettext_noop("L3 needs a multi-drug conflict or a sequential dependency turn"),
    "l3_resources": gettext_noop("L3 needs >= 3 resource types, got %(types)s"),
    # date cutoff, tool contract
    "date_cutoff": gettext_noop("%(where)s shows %(date)s >= %(today)s"),
    "not_contract": gettext_noop("%(where)s: not contract parameters: %(names)s"),
    "warned": gettext_noop("%(where)s warned: %(warnings)s"),
    # content
    "placeholder": gettext_noop("%(where)s: %(what)s in “%(snippet)s”"),
    "names_tool": gettext_noop("%(where)s: names the tool %(tools)s"),
    "machine": gettext_noop("%(where)s: %(what)s (“%(match)s”)"),
    # A problem worded elsewhere (a rubric check's validation, a tool's contract error), after its field.
    "detail": gettext_noop("%(where)s: %(detail)s"),
}

# Wording shown instead of the stored one where that names a code rather than what it means (same params).
DISPLAY: dict[str, str] = {
    "turn0_explicit": gettext_noop("the first turn must be explicit"),
    "arc_sequence": gettext_noop("the session's arc number %(sequence)s does not match its arc %(arc)s"),
    "tool_source": gettext_noop("the turn's tool source is %(source)s but its calls are %(kinds)s"),
    "workup_mode": gettext_noop("%(mode)s does not match the steps"),
}

# What a content gate found (the ``what`` of "placeholder" and "machine").
FINDINGS: dict[str, str] = {
    "lone_question_mark": gettext_noop("a lone '?' where a value should be"),
    "none": gettext_noop("'None'"),
    "null": gettext_noop("a null value"),
    "empty_bracket": gettext_noop("an empty list, object or bracket"),
    "template_field": gettext_noop("an unfilled template field"),
    "todo": gettext_noop("a TODO marker"),
    "na": gettext_noop("'N/A'"),
    "sim_id": gettext_noop("a simulated resource id"),
    "log_phrase": gettext_noop("a tool log phrase"),
}
_LANGUAGES = {"en": gettext_lazy("English"), "zh": gettext_lazy("Chinese")}

_TOOL = r"[A-Za-z_][\w.\-]*"
_WHERE_PATTERNS = {
    key: compile_template(template, param_patterns={"n": r"\d+", "idx": r"\d+", "tool": _TOOL})
    for key, template in WHERE.items()
}
# The same shapes inside a message, without their named groups (a message names one field).
_WHERE = "|".join(re.sub(r"\(\?P<\w+>", "(?:", pattern.pattern) for pattern in _WHERE_PATTERNS.values())
_PARAM_PATTERNS = {
    "where": f"(?:{_WHERE})",
    "idx": r"\d+",
    "sequence": r"\d+",
    "count": r"\d+",
    "low": r"\d+",
    "high": r"\d+",
    "tool": _TOOL,
    "task_type": r"[A-Z]{2}",
    "lang": r"en|zh",
    "detail": r".*",
    "error": r".*",
}
_PATTERNS = {key: compile_template(template, param_patterns=_PARAM_PATTERNS) for key, template in MESSAGES.items()}


def where(key: str, **params: Any) -> str:
    """The stored (English) name of a field or step: ``where("rubric_zh", n=2)`` → ``rubric item 2 (zh)``."""
    return WHERE[key] % params


def gate_message(key: str, **params: Any) -> str:
    """The stored (English) message of a gate failure; ``what`` is a key of :data:`FINDINGS`."""
    if "what" in params:
        params["what"] = FINDINGS[params["what"]]
    return MESSAGES[key] % params


def parse_gate_message(text: str) -> tuple[str, dict[str, str]] | None:
    """``(key, params)`` of a stored message; ``None`` for a text of no known shape (an LLM audit's words)."""
    return parse_text(text, patterns=_PATTERNS)


def _step_number(params: dict[str, str]) -> dict[str, str]:
    """Gold steps are stored from 0; every screen counts them from 1, as it does rubric items."""
    if "idx" in params:
        params["idx"] = str(int(params["idx"]) + 1)
    return params


def _where_display(text: str) -> str:
    parsed = parse_text(text, patterns=_WHERE_PATTERNS)
    return _(WHERE[parsed[0]]) % _step_number(parsed[1]) if parsed else text


Label = Callable[..., str]  # label(kind=..., code=...): a stored code's UI label


def _code(*, kind: str, code: str) -> str:
    return code


def _list_display(text: str, *, kind: str, label: Label) -> str:
    """A stored Python list or tuple (``['ehr', 'write']``) as words; an arc as ``IL → DG → CR → WU``."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    if not isinstance(value, list | tuple):
        return text
    words = [str(label(kind=kind, code=str(v))) for v in value]
    return " → ".join(words) if isinstance(value, tuple) else (pgettext("list separator", ", ").join(words) or "—")


# Params that hold a stored code (their label) or a list of them; the other params are shown as stored.
_CODES = {"source": "tool_source", "mode": "workup_mode", "task_type": "task_type"}
_LISTS = {"kinds": "tool_kind", "tools": "", "types": "", "arc": ""}


def display_gate_message(text: Any, *, label: Label = _code) -> str:
    """A stored gate message in the current UI language; a text of no known shape as it is.

    ``label(kind=..., code=...)`` words a stored code (a tool kind, a tool source, a work-up mode)."""
    text = "" if text is None else str(text)
    parsed = parse_gate_message(text)
    if parsed is None:
        return text
    key, params = parsed
    shown = _step_number(dict(params))
    if "where" in shown:
        shown["where"] = _where_display(shown["where"])
    if "what" in shown:
        shown["what"] = _(shown["what"])
    if "lang" in shown:
        shown["lang"] = str(_LANGUAGES[shown["lang"]])
    if shown.get("subtype") == "none":
        shown["subtype"] = _("none")
    for name, kind in _CODES.items():
        if name in shown:
            shown[name] = str(label(kind=kind, code=shown[name]))
    for name, kind in _LISTS.items():
        if name in shown:
            shown[name] = _list_display(shown[name], kind=kind, label=label if kind else _code)
    return _(DISPLAY.get(key, MESSAGES[key])) % shown
