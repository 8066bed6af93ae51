"""Patient replay: patient tools are answered from the reviewed gold patient answers (``--live-patient`` opts out).

A call matches a gold answer when the tool name and the *normalised* arguments are equal.
Normalising drops what the harness fills in or what is free wording (``session_id``,
``subject_id``, ``language``, ``question``), drops empty values, and compares strings
case-insensitively with whitespace collapsed. So ``{"medication": " Furosemide "}`` matches the gold
``{"medication": "furosemide", "question": "How do you take it?"}``, but ``{}`` does not.

No match → the fixed reply :data:`MISS_REPLY` (in the run's language) and a recorded replay miss.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from evaluation.dataset import EvalSession

IGNORED_ARGUMENTS = frozenset({"session_id", "subject_id", "language", "question"})
MISS_REPLY = {
    "en": "I'm not sure; I can't tell you anything more about that.",
    "zh": "这个我不太清楚，也说不出更多了。",
}


def normalise_arguments(arguments: dict[str, Any] | None) -> str:
    out: dict[str, Any] = {}
    for key, value in (arguments or {}).items():
        if key in IGNORED_ARGUMENTS or value is None or value == "":
            continue
        out[key] = " ".join(value.lower().split()) if isinstance(value, str) else value
    return json.dumps(out, sort_keys=True, ensure_ascii=False, default=str)


def replay_key(tool: str, arguments: dict[str, Any] | None) -> tuple[str, str]:
    return tool, normalise_arguments(arguments)


@dataclass
class ReplayBook:
    """The gold patient answers of one session; first gold answer wins for a repeated key."""

    answers: dict[tuple[str, str], Any] = field(default_factory=dict)

    @classmethod
    def for_session(cls, session: EvalSession) -> ReplayBook:
        book = cls()
        for step in session.patient_answers:
            book.answers.setdefault(replay_key(step.tool, step.arguments), step.observation)
        return book

    def answer(self, *, tool: str, arguments: dict[str, Any], language: str) -> tuple[Any, bool]:
        """``(observation, hit)``."""
        key = replay_key(tool, arguments)
        if key in self.answers:
            return self.answers[key], True
        reply = {"resourceType": "PatientAnswer", "tool": tool, "answer": MISS_REPLY[language], "language": language}
        return reply, False
