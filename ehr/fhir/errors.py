"""Errors a model can read: every bad call becomes ``{"error": ..., "hint": ...}``, never an exception.

The model reads them in English, written from the templates below (also gettext msgids, so the texts stay
byte-identical to what the release's runner sees). Screens read a stored error back to its template and show it
in the UI language (:func:`display_tool_error`), with the parameter's own Chinese description where the hint
quotes the English one.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

from core.text_templates import compile_template, parse_text

ERRORS: dict[str, str] = {
    "patient_not_found": gettext_noop("Patient %(subject_id)s not found"),
    "encounter_not_found": gettext_noop("Encounter %(hadm_id)s not found for patient %(subject_id)s (as of %(date)s)"),
    "window": gettext_noop("date_from %(date_from)s is after date_to %(date_to)s"),
    "unknown_code": gettext_noop("No %(category)s item matches code %(code)s"),
    "not_json": gettext_noop("arguments of %(tool)s are not valid JSON: %(msg)s at character %(pos)s"),
    "not_object": gettext_noop("arguments of %(tool)s must be a JSON object, got %(got)s"),
    "unknown_tool": gettext_noop("unknown tool %(given)s"),
    "not_patient_tool": gettext_noop("%(tool)s is not a patient tool"),
    "needs_patient": gettext_noop("%(tool)s needs the session's patient"),
    "no_patient": gettext_noop("%(tool)s cannot be answered: no patient is available in this environment"),
    "target_date": gettext_noop("target_date %(target)s is before the current date %(today)s"),
    "missing": gettext_noop("missing required argument '%(name)s' for %(tool)s"),
    "null": gettext_noop("argument '%(name)s' of %(tool)s is null"),
    "wrong_type": gettext_noop("argument '%(name)s' of %(tool)s must be %(type)s, got %(got)s %(value)s"),
    "empty": gettext_noop("argument '%(name)s' of %(tool)s is empty"),
    "unknown_value": gettext_noop("argument '%(name)s' of %(tool)s has unknown value %(value)s"),
    "out_of_range": gettext_noop("argument '%(name)s' of %(tool)s is out of range: %(value)s"),
    "not_a_date": gettext_noop("argument '%(name)s' of %(tool)s is not a date: %(value)s"),
    "not_a_calendar_date": gettext_noop("argument '%(name)s' of %(tool)s is not a valid calendar date: %(value)s"),
}

HINTS: dict[str, str] = {
    "use_subject": gettext_noop("Use the session's subject_id (see the session info), e.g. subject_id=10001234."),
    "use_hadm": gettext_noop(
        "Pass hadm_id of one of this patient's admissions (Encounter.search lists them), "
        "or omit it to search all admissions."
    ),
    "swap": gettext_noop("Swap them, or omit one of them."),
    "test_name_close": gettext_noop(
        "Use a test name such as 'creatinine', 'potassium', 'heart rate', or a numeric MIMIC itemid. "
        "Closest names: %(names)s."
    ),
    "test_name": gettext_noop(
        "Use a test name such as 'creatinine', 'potassium', 'heart rate', or a numeric MIMIC itemid."
    ),
    "json_code": gettext_noop(
        'Send the arguments as one JSON object, e.g. {"subject_id": 10001234, "code": "creatinine"}.'
    ),
    "json_object": gettext_noop('Send the arguments as one JSON object, e.g. {"subject_id": 10001234}.'),
    "tool_close": gettext_noop("Call one of the tools listed in the tool schemas. Did you mean: %(names)s?"),
    "tool": gettext_noop("Call one of the tools listed in the tool schemas."),
    "patient_tools": gettext_noop("Use one of: %(tools)s."),
    "pass_subject": gettext_noop("Pass subject_id (the session's patient id)."),
    "use_ehr": gettext_noop("Use the EHR tools (e.g. DocumentReference.search with keyword='Social History') instead."),
    "today_or_later": gettext_noop("Requests are for today or later; omit target_date for 'as soon as routine'."),
    "required_example": gettext_noop("Pass %(name)s (%(type)s), e.g. %(name)s=%(example)s: %(description)s"),
    "required": gettext_noop("Pass %(name)s (%(type)s): %(description)s"),
    "omit_or_pass": gettext_noop("Omit %(name)s or pass %(type)s."),
    "pass_as_example": gettext_noop("Pass %(name)s as %(type)s e.g. %(example)s."),
    "pass_as": gettext_noop("Pass %(name)s as %(type)s."),
    "non_empty": gettext_noop("Pass a non-empty %(name)s or omit it."),
    "one_of": gettext_noop("Use one of: %(values)s."),
    "between": gettext_noop("Pass a value between %(minimum)s and %(maximum)s."),
    "date_format": gettext_noop("Use the format YYYY-MM-DD, e.g. '2180-07-23'."),
    "existing_date": gettext_noop("Use an existing date, YYYY-MM-DD."),
}

# JSON types as the error texts name them.
TYPE_NAMES: dict[str, str] = {
    "string": gettext_noop("a string"),
    "integer": gettext_noop("an integer"),
    "number": gettext_noop("a number"),
    "boolean": gettext_noop("true or false"),
}


class ToolError(Exception):
    """Raised inside tool code for a problem the caller can fix; ``execute_tool`` turns it into a dict."""

    def __init__(self, error: str, hint: str) -> None:
        super().__init__(error)
        self.error = error
        self.hint = hint

    @classmethod
    def of(cls, error: str, hint: str, **params: Any) -> ToolError:
        """The error and hint written from their templates (keys of :data:`ERRORS` and :data:`HINTS`)."""
        return cls(ERRORS[error] % params, HINTS[hint] % params)

    def as_dict(self) -> dict[str, str]:
        return {"error": self.error, "hint": self.hint}


_TOOL = r"[A-Za-z_][\w.\-]*"
_TYPE = "|".join(TYPE_NAMES.values())
_PARAMS = {"name": r"[^' ]+", "tool": _TOOL, "type": f"(?:{_TYPE})", "value": r".*", "description": r".*"}
_ERRORS = {key: compile_template(t, param_patterns=_PARAMS) for key, t in ERRORS.items()}
_HINTS = {key: compile_template(t, param_patterns=_PARAMS) for key, t in HINTS.items()}


def _shown(template: str, params: dict[str, str], *, tool: str | None) -> str:
    shown = dict(params)
    if shown.get("type") in TYPE_NAMES.values():
        shown["type"] = _(shown["type"])
    if "description" in shown and tool and (get_language() or "").startswith("zh"):
        from ehr.fhir import REGISTRY  # the registry imports this module

        param = next((p for p in getattr(REGISTRY.get(tool), "params", ()) if p.name == shown.get("name")), None)
        shown["description"] = param.zh if param is not None and param.zh else shown["description"]
    return _(template) % shown


def display_tool_error(*, error: Any, hint: Any = "") -> tuple[str, str]:
    """A refused call's error and hint in the current UI language; a text of no known shape as it is."""
    error, hint = str(error or ""), str(hint or "")
    parsed_error = parse_text(error, patterns=_ERRORS)
    tool = parsed_error[1].get("tool") if parsed_error else None
    if parsed_error:
        error = _shown(ERRORS[parsed_error[0]], parsed_error[1], tool=tool)
    parsed_hint = parse_text(hint, patterns=_HINTS)
    if parsed_hint:
        hint = _shown(HINTS[parsed_hint[0]], parsed_hint[1], tool=tool)
    return error, hint
