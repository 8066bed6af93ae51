"""Tool parameters: one declaration gives both the JSON schema (EN/ZH) and the argument check.

Keeping validation driven by the same ``Param`` objects as the published schema means the model
can never be told one thing by the schema and another by the validator.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from ehr.fhir.errors import TYPE_NAMES, ToolError

Handler = Callable[..., dict[str, Any]]
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T]\d{2}:\d{2}(:\d{2})?$")


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # JSON schema type: string | integer | number | boolean
    en: str
    zh: str
    required: bool = False
    enum: tuple[str, ...] | None = None
    format: str | None = None  # "date": YYYY-MM-DD (a datetime is accepted and truncated to its day)
    minimum: int | None = None
    maximum: int | None = None
    default: Any = None
    example: Any = None

    def schema(self, *, language: str) -> dict[str, Any]:
        """The released contract's shape: type, description and enum only (checks stay server-side)."""
        out: dict[str, Any] = {"type": self.type, "description": self.zh if language == "zh" else self.en}
        if self.enum:
            out["enum"] = list(self.enum)
        return out

    def clean(self, value: Any, *, tool: str) -> Any:
        """Check one supplied value; returns it converted (dates become ``datetime.date``)."""
        named = {"name": self.name, "tool": tool, "type": TYPE_NAMES[self.type]}
        if value is None:
            raise ToolError.of("null", "omit_or_pass", **named)
        ok = {
            "string": isinstance(value, str),
            # bool is an int in Python but never a valid integer argument
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
        }[self.type]
        if not ok:
            hint = "pass_as_example" if self.example is not None else "pass_as"
            got = {"got": type(value).__name__, "value": repr(value), "example": repr(self.example)}
            raise ToolError.of("wrong_type", hint, **named, **got)
        if self.type == "string":
            value = value.strip()
            if not value:
                raise ToolError.of("empty", "non_empty", **named)
        if self.enum is not None and value not in self.enum:
            raise ToolError.of("unknown_value", "one_of", **named, value=repr(value), values=", ".join(self.enum))
        too_low = self.minimum is not None and value < self.minimum
        too_high = self.maximum is not None and value > self.maximum
        if too_low or too_high:
            raise ToolError.of(
                "out_of_range", "between", **named, value=value, minimum=self.minimum, maximum=self.maximum
            )
        if self.format == "date":
            return parse_date(value, name=self.name, tool=tool)
        return value


def parse_date(value: str, *, name: str, tool: str) -> dt.date:
    text = value.strip()
    m = _DATETIME_RE.match(text)
    if m:
        text = m.group(1)
    if not _DATE_RE.match(text):
        raise ToolError.of("not_a_date", "date_format", name=name, tool=tool, value=repr(value))
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ToolError.of("not_a_calendar_date", "existing_date", name=name, tool=tool, value=repr(value)) from None


# Optional arguments some models fill with these values for "not given" (the release treats them so).
def is_placeholder(value: Any) -> bool:
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


# What the tool layer did to fit a call to the contract. The model reads these English texts as they are; the
# results page reads them back and shows them in the UI language (annotations.templatetags.review_i18n).
WARNINGS = {
    "unknown_argument": gettext_noop("unknown argument '%(name)s' ignored; %(tool)s takes: %(params)s"),
    "superseded_argument": gettext_noop("argument '%(name)s' ignored: '%(target)s' is already given"),
}


@dataclass(frozen=True)
class Cleaned:
    """Checked arguments plus what was done to the call to make it fit the contract."""

    args: dict[str, Any]
    warnings: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()  # (alias used, contract name)
    dropped: tuple[str, ...] = ()  # unknown or superseded argument names


def _renamed(
    *, tool: Tool, arguments: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, str]], list[str], list[str]]:
    """Map alias names to contract names; a contract name given outright wins over any alias of it."""
    known = {p.name for p in tool.params}
    out: dict[str, Any] = {k: v for k, v in arguments.items() if k in known}
    renamed: list[tuple[str, str]] = []
    dropped: list[str] = []
    warnings: list[str] = []
    for name, value in arguments.items():
        if name in known:
            continue
        target = tool.contract_name(name)
        if target is None:
            dropped.append(name)
            takes = ", ".join(p.name for p in tool.params)
            warnings.append(WARNINGS["unknown_argument"] % {"name": name, "tool": tool.name, "params": takes})
        elif target in out:
            dropped.append(name)
            warnings.append(WARNINGS["superseded_argument"] % {"name": name, "target": target})
        else:
            out[target] = value
            renamed.append((name, target))
    return out, renamed, dropped, warnings


def clean_arguments(*, tool: Tool, arguments: dict[str, Any], filled: dict[str, Any]) -> Cleaned:
    """Validate ``arguments`` against the tool's contract; ``filled`` are harness values for missing ones.

    Alias names are mapped, unknown names dropped (named in ``warnings``), placeholder values of
    optional parameters read as "not given", known value aliases mapped to the contract's enum.
    """
    raw, renamed, dropped, warnings = _renamed(tool=tool, arguments=arguments)
    out: dict[str, Any] = {}
    for p in tool.params:
        value = raw.get(p.name)
        given = p.name in raw and not (not p.required and is_placeholder(value))
        if given and isinstance(value, str) and p.name in tool.value_aliases:
            value = tool.value_aliases[p.name].get(value.strip().lower(), value)
        if given:
            out[p.name] = p.clean(value, tool=tool.name)
        elif p.name in filled and filled[p.name] is not None:
            out[p.name] = filled[p.name]
        elif p.required:
            raise ToolError.of(
                "missing",
                "required_example" if p.example is not None else "required",
                name=p.name,
                tool=tool.name,
                type=TYPE_NAMES[p.type],
                example=repr(p.example),
                description=p.en,
            )
        else:
            out[p.name] = p.default
    return Cleaned(args=out, warnings=tuple(warnings), renamed=tuple(renamed), dropped=tuple(dropped))


def api_name(name: str) -> str:
    """``Observation.search`` → ``Observation__search`` (OpenAI function names allow no dots; the release's map)."""
    return name.replace(".", "__")


# Argument names every tool accepts for its patient/admission: the FHIR-style names of earlier versions.
COMMON_ALIASES = {"patient": "subject_id", "encounter": "hadm_id", "patient_id": "subject_id"}


@dataclass(frozen=True)
class Tool:
    name: str
    kind: str  # ehr | patient | write | control (the benchmark's tool sources)
    en: str
    zh: str
    params: tuple[Param, ...]  # the model-facing contract, exactly the released one
    handler: Handler
    # other names accepted for a parameter: ours of earlier versions and the release's known wrong names
    aliases: dict[str, str] = field(default_factory=dict)
    # per parameter, other spellings of enum values (lower-cased) → the contract's value
    value_aliases: dict[str, dict[str, str]] = field(default_factory=dict)

    def contract_name(self, name: str) -> str | None:
        """The contract parameter an argument name stands for (itself or what it aliases); None if unknown."""
        known = {p.name for p in self.params}
        target = name if name in known else self.aliases.get(name, COMMON_ALIASES.get(name))
        return target if target in known else None

    def schema(self, *, language: str, api_safe_names: bool = False) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": api_name(self.name) if api_safe_names else self.name,
                "description": self.zh if language == "zh" else self.en,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.schema(language=language) for p in self.params},
                    "required": [p.name for p in self.params if p.required],
                },
            },
        }
