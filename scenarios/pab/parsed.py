"""A release record as parsed, before it touches the database: the session's fields, its turns, their gold steps
and rubric items (built by :func:`scenarios.pab.schema.parse_record`, stored by :mod:`scenarios.pab.services`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ParsedStep:
    idx: int
    tool: str
    arguments: Any
    observation: Any
    dependency_list: list[Any]
    extra: dict[str, Any]


@dataclass
class ParsedRubric:
    idx: int
    text_en: str
    text_zh: str
    is_safety: bool
    safety_inferred: bool
    machine_check: dict[str, Any] | None
    # The rubric compiler's suggestion (physreview extension ``compiled``, see scenarios.pab.writer).
    compiled_check: dict[str, Any] | None = None
    compiled_rule: str = ""
    compiled_version: str = ""
    compiled_confidence: float | None = None
    compiled_note: str = ""
    compiled_state: str = ""


@dataclass
class ParsedTurn:
    fields: dict[str, Any]  # Turn model fields except session/index
    steps: list[ParsedStep] = field(default_factory=list)
    rubric: list[ParsedRubric] = field(default_factory=list)


@dataclass
class ParsedRecord:
    fields: dict[str, Any]  # Session model fields except run/run_index/source
    turns: list[ParsedTurn]

    @property
    def record_id(self) -> str:
        return self.fields["record_id"]

    @property
    def session_id(self) -> str:
        return self.fields["session_id"]
