"""Labels of stored codes in the UI language (the codes themselves stay as stored), and the readable
forms a physician sees instead of developer values: field keys, empty values, machine checks, numbering."""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotations.guidelines import render_markdown
from annotations.models import TurnState

register = template.Library()

# UI labels of the stored codes. Not the models' choices: TaskType's labels are PhysAssistBench's own
# wording, written verbatim into its JSONL, so they must stay English there.
SCENARIOS = {
    "diagnostic_workup": gettext_lazy("Diagnostic work-up"),
    "med_safety": gettext_lazy("Medication safety"),
    "treatment_response": gettext_lazy("Treatment response"),
    "discharge_planning": gettext_lazy("Discharge planning"),
}
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
}
EMPTY = "—"


@register.filter
def turn_status(value: str) -> str:
    """``needs_adjudication`` → "Needs adjudication" (or its translation); unknown codes as they are."""
    return TurnState.LABELS.get(value, value)


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
        return _("Tool call %(n)s: %(what)s") % {"n": idx, "what": _("arguments") if base == "arguments" else base}
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
        params = "; ".join(f"{k} = {v}" for k, v in (check.get("params") or {}).items())
        text = _("calls %(tool)s") % {"tool": check.get("tool", "")}
        return _("%(call)s with %(params)s") % {"call": text, "params": params} if params else text
    return str(kind)


@register.filter
def markdown_html(text: str) -> SafeString:
    """Markdown (a dataset card, written by the app or an admin) as cleaned HTML (nh3 allow-list)."""
    return render_markdown(text or "")
