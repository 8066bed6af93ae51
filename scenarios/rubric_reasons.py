"""Reasons of the rubric checks (:mod:`scenarios.rubric_match`, :mod:`evaluation.judges.rules`) as a key and
its params, and back.

The stored reason is English and stays byte-identical (exports, caches and released numbers depend on
it): each shape is an English template, also its gettext msgid, filled with ``%``. A stored reason is
read back to (key, params) by the same templates, so reasons stored before this module existed are
shown in the UI language too (:func:`display_reason`); a text of no known shape is shown as it is.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, pgettext_lazy

from core.text_templates import compile_template, parse_text

# key -> English template. Order matters when reading back: a more specific shape before a looser one.
TEMPLATES: dict[str, str] = {
    "no_form": gettext_noop("no machine-checkable form"),
    "compiled_removed": gettext_noop("compiled form removed by the reviewer"),
    "compiled": gettext_noop("compiled (%(rule)s): %(reason)s"),
    "found_in_sentence": gettext_noop("found %(number)s with %(unit)s in the same sentence"),
    "found_with_unit": gettext_noop("found %(number)s %(unit)s"),
    "found": gettext_noop("found %(number)s"),
    "value_missing": gettext_noop("no %(value)s %(unit)s (±%(tolerance)s) in the answer"),
    "mentions": gettext_noop("mentions %(phrase)s"),
    "mentions_none": gettext_noop("none of %(phrases)s in the answer"),
    "no_call": gettext_noop("no %(tool)s call was made"),
    "called_any": gettext_noop("%(tool)s called with any parameters"),
    "called_with": gettext_noop("%(tool)s called with %(params)s"),
    "called_not_with": gettext_noop("%(tool)s called, but not with %(params)s"),
    "recommends": gettext_noop("recommends %(phrase)s"),
    "recommends_none": gettext_noop("does not recommend any of the listed actions"),
    "all_of_held": gettext_noop("all %(count)s parts hold: %(reason)s"),
    "all_of_failed": gettext_noop("part %(part)s of %(count)s fails: %(reason)s"),
    # The release judge's own reason when the model returned fewer scores than items.
    "no_score": gettext_noop("no score returned: counted as 0"),
}

PART_SEPARATOR = " · "  # between the parts' reasons of an ``all_of`` check (evaluation.judges.rules)

_NUMBER = r"[-+]?\d+(?:[.,]\d+)?(?:e[-+]?\d+)?"
_QUOTED = r"(?:“[^”]*”(?:, “[^”]*”)*)?"
_PARAM_PATTERNS = {
    "number": _NUMBER,
    "value": _NUMBER,
    "tolerance": _NUMBER,
    "unit": r".*?",
    "phrase": r"“.*”",
    "phrases": _QUOTED,
    "tool": r"[A-Za-z_][\w.\-]*",
    "rule": r"[\w/\-]+",
    "params": r".*",
    "count": r"\d+",
    "part": r"\d+",
    "reason": r".*",
}
_PATTERNS = {
    key: compile_template(template, param_patterns=_PARAM_PATTERNS, default=r".*")
    for key, template in TEMPLATES.items()
}


def reason(key: str, **params: Any) -> str:
    """The stored (English) text of a reason: exactly what the f-strings it replaces wrote."""
    return TEMPLATES[key] % {name: f"{value}" for name, value in params.items()}


def parse_reason(text: str) -> tuple[str, dict[str, str]] | None:
    """``(key, params)`` of a stored reason, ``None`` for a text of no known shape (an LLM judge's words)."""
    return parse_text(text, patterns=_PATTERNS)


# Parts of a compiled rule's name ("term/date", "must_not_recommend/drug") as the UI shows them.
RULE_PARTS = {
    "value_unit": pgettext_lazy("compiled rule", "value with unit"),
    "term": pgettext_lazy("compiled rule", "term"),
    "write_call": pgettext_lazy("compiled rule", "write call"),
    "must_not_recommend": pgettext_lazy("compiled rule", "must not recommend"),
    "action": pgettext_lazy("compiled rule", "action"),
    "claim": pgettext_lazy("compiled rule", "claim"),
    "drug": pgettext_lazy("compiled rule", "drug"),
    "absent": pgettext_lazy("compiled rule", "absent"),
    "code": pgettext_lazy("compiled rule", "code"),
    "date": pgettext_lazy("compiled rule", "date"),
    "entity": pgettext_lazy("compiled rule", "entity"),
    "status": pgettext_lazy("compiled rule", "status"),
    "param": pgettext_lazy("compiled rule", "parameter"),
    "tool": pgettext_lazy("compiled rule", "tool"),
    "all_of": pgettext_lazy("compiled rule", "all of"),
    "values": pgettext_lazy("compiled rule", "values"),
    "dose_frequency": pgettext_lazy("compiled rule", "dose and frequency"),
}
_PARAM_NAME = re.compile(r"(?:^|; )([A-Za-z_]\w*) = ")


def readable_code(code: Any) -> str:
    """An unknown code as words ("critical_withheld" → "critical withheld") rather than as an identifier."""
    return str(code).replace("_", " ").strip() if code not in (None, "") else "—"


def value_text(value: Any) -> str:
    """A parameter value as a physician reads it: never a Python repr (``None``, ``['a']``, ``{'k': 1}``)."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, str):
        return f"“{value}”"
    if isinstance(value, list | tuple | set):
        return ", ".join(value_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {value_text(v)}" for k, v in value.items())
    return str(value)


def _stored_value_text(raw: str) -> str:
    if raw.startswith("“") and raw.endswith("”"):
        return raw  # a string value, already quoted
    try:
        return value_text(ast.literal_eval(raw))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw


def params_display(text: str) -> str:
    """``params_text``'s stored ``name = value; …`` with each value as text (``dose = None`` → ``dose = —``)."""
    names = list(_PARAM_NAME.finditer(text))
    if not names or names[0].start() != 0:
        return text
    parts = []
    for i, match in enumerate(names):
        end = names[i + 1].start() if i + 1 < len(names) else len(text)
        parts.append(f"{match.group(1)} = {_stored_value_text(text[match.end() : end])}")
    return "; ".join(parts)


def rule_display(rule: str) -> str:
    return "/".join(str(RULE_PARTS.get(part) or readable_code(part)) for part in rule.split("/"))


def display_reason(text: Any) -> str:
    """A stored reason in the current UI language; a text of no known shape as it is."""
    text = "" if text is None else str(text)
    parsed = parse_reason(text)
    if parsed is None:
        return text
    key, params = parsed
    shown = dict(params)
    if "rule" in shown:
        shown["rule"] = rule_display(shown["rule"])
    if key == "all_of_held":  # every part's own reason, joined by the judge with " · "
        shown["reason"] = PART_SEPARATOR.join(display_reason(part) for part in shown["reason"].split(PART_SEPARATOR))
    elif "reason" in shown:
        shown["reason"] = display_reason(shown["reason"])
    if "params" in shown:
        shown["params"] = params_display(shown["params"])
    # A unitless value leaves two spaces in the stored text ("no 5  (±0) in the answer").
    return re.sub(r"(?<=\S)  +(?=\S)", " ", _(TEMPLATES[key]) % shown)
