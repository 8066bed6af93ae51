"""Patient replay: patient tools are answered from the reviewed gold patient answers (``--live-patient`` opts out).

Two ways to find the answer: :class:`ReplayBook` (PhysReview's, by tool and arguments, below) and
:class:`OrderReplayBook` (``runeval --protocol release``: by tool name and call order, arguments
ignored, a chosen health-literacy variant, as the released runner does).

A call matches a gold answer when the tool name and the *normalised* arguments are equal.
Normalising puts the arguments in the released contract's terms (:mod:`evaluation.arguments`: alias
names such as ``medication``/``symptom`` map to ``drug``/``query``, placeholders and unknown names
drop out, gold of an earlier version is upgraded), drops what the harness fills in (``session_id``,
``subject_id``), and compares strings case-insensitively with whitespace collapsed. So
``{"drug": " Furosemide "}`` or ``{"medication": "FUROSEMIDE"}`` matches the gold ``{"drug":
"furosemide"}`` (or an older gold ``{"medication": "furosemide", "question": "How do you take
it?"}``), but ``{}`` does not.

Languages. A generated gold answer is bilingual: ``answer`` (English) and ``answer_zh`` (the same
question asked of the patient in Chinese, kept by the generator). A replayed answer is in the run's
language: a zh run gets ``answer_zh`` as ``answer`` with ``language: "zh"``, an en run the English
``answer``; the other language's text never reaches the model. What the model sees is the patient's
words only (``resourceType``, ``tool``, ``language``, ``answer``; see
:func:`scenarios.patient.public_view`): the memory fact ids, the ``withheld`` flag and the persona
stay in the gold. A gold answer without the run's language (imported PAB data, rows generated
before answers were bilingual) is replayed in the language it has and reported as a *language
fallback* (:attr:`Replayed.language_fallback`), so a run can count it instead of hiding it.

No match → the fixed reply :data:`MISS_REPLY` (in the run's language) and a recorded replay miss.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ehr.fhir import canonical_name
from evaluation.arguments import canonical_arguments
from evaluation.dataset import EvalSession
from scenarios.patient.answers import CHINESE_TEXT_KEYS

IGNORED_ARGUMENTS = frozenset({"session_id", "subject_id"})
# A tool outside the registry has no contract to map through: its free wording is ignored by name.
_UNKNOWN_TOOL_IGNORED = IGNORED_ARGUMENTS | {"language", "question"}
MISS_REPLY = {
    "en": "I'm not sure; I can't tell you anything more about that.",
    "zh": "这个我不太清楚，也说不出更多了。",
}
# Internal parts of an agentic-patient answer that a model under test must not see.
_PRIVATE_KEYS = ("facts", "withheld", "persona")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def normalise_arguments(*, tool: str, arguments: dict[str, Any] | None) -> str:
    ignored = IGNORED_ARGUMENTS if canonical_name(tool) else _UNKNOWN_TOOL_IGNORED
    out: dict[str, Any] = {}
    for key, value in canonical_arguments(tool=tool, arguments=arguments, stored=True).items():
        if key in ignored or value is None or value == "":
            continue
        out[key] = " ".join(value.lower().split()) if isinstance(value, str) else value
    return json.dumps(out, sort_keys=True, ensure_ascii=False, default=str)


def replay_key(tool: str, arguments: dict[str, Any] | None) -> tuple[str, str]:
    name = canonical_name(tool) or tool
    return name, normalise_arguments(tool=name, arguments=arguments)


@dataclass(frozen=True)
class Replayed:
    """One replayed patient reply: what the model sees, and how it was found."""

    observation: dict[str, Any]
    hit: bool
    # The gold had no text in the run's language: the other language's text was replayed.
    language_fallback: bool = False


def patient_reply(*, tool: str, answer: str, language: str) -> dict[str, Any]:
    """The shape of every replayed reply (hit or miss)."""
    return {"resourceType": "PatientAnswer", "tool": tool, "answer": answer, "language": language}


def _text_language(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def _zh_text(gold: dict[str, Any]) -> str | None:
    for key in CHINESE_TEXT_KEYS:
        if isinstance(gold.get(key), str) and gold[key].strip():
            return gold[key]
    return None


def localise(*, tool: str, gold: Any, language: str) -> tuple[dict[str, Any], bool]:
    """``(observation for the model, language_fallback)`` for one gold patient answer in ``language``.

    An agentic-patient answer (``resourceType: PatientAnswer``) or a plain string (imported PAB data)
    becomes :func:`patient_reply`. Any other dict keeps its keys but the Chinese text and the private
    ones; in a zh run its Chinese text, if any, replaces ``answer``.
    """
    if isinstance(gold, str):
        said = _text_language(gold)
        return patient_reply(tool=tool, answer=gold, language=said), said != language
    if not isinstance(gold, dict):
        text = json.dumps(gold, ensure_ascii=False, default=str)
        return patient_reply(tool=tool, answer=text, language="en"), language != "en"
    zh_text = _zh_text(gold)
    if gold.get("resourceType") != "PatientAnswer":
        out = {k: v for k, v in gold.items() if k not in CHINESE_TEXT_KEYS and k not in _PRIVATE_KEYS}
        if language == "zh" and zh_text is not None:
            return {**out, "answer": zh_text, "language": "zh"}, False
        text = (
            out.get("answer")
            if isinstance(out.get("answer"), str)
            else json.dumps(out, ensure_ascii=False, default=str)
        )
        said = str(gold.get("language") or _text_language(str(text)))
        return out, said != language
    if language == "zh" and zh_text is not None:
        return patient_reply(tool=tool, answer=zh_text, language="zh"), False
    english = gold.get("answer")
    if isinstance(english, str) and english.strip():
        said = str(gold.get("language") or _text_language(english))
        return patient_reply(tool=tool, answer=english, language=said), said != language
    if zh_text is not None:  # only Chinese text: an en run falls back to it
        return patient_reply(tool=tool, answer=zh_text, language="zh"), language != "zh"
    return patient_reply(tool=tool, answer="", language=language), False


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

    def reply(self, *, tool: str, arguments: dict[str, Any], language: str) -> Replayed:
        """The reply to one patient call in the run's ``language`` (a fresh dict: callers may change it)."""
        key = replay_key(tool, arguments)
        if key not in self.answers:
            return Replayed(patient_reply(tool=tool, answer=MISS_REPLY[language], language=language), hit=False)
        observation, fallback = localise(tool=tool, gold=self.answers[key], language=language)
        return Replayed(json.loads(json.dumps(observation, default=str)), hit=True, language_fallback=fallback)


def _literacy_text(*, tool: str, gold: Any, language: str, literacy: str) -> tuple[str, bool, bool]:
    """``(text, literacy_fallback, language_fallback)`` of one gold patient answer, as the release
    replays it: the ``literacy`` variant of ``patient_responses_all_literacy``, else ``patient_response``
    (counted as a literacy fallback); a PhysReview answer has no variants (also a fallback)."""
    if isinstance(gold, dict) and "patient_response" in gold:
        variants = gold.get("patient_responses_all_literacy")
        chosen = variants.get(literacy) if isinstance(variants, dict) else None
        if isinstance(chosen, str):
            return chosen, False, False
        text = str(gold.get("patient_response") or "")
        return text, True, bool(text) and _text_language(text) != language
    observation, language_fallback = localise(tool=tool, gold=gold, language=language)
    answer = observation.get("answer")
    text = answer if isinstance(answer, str) else json.dumps(observation, ensure_ascii=False, default=str)
    return text, True, language_fallback


@dataclass
class OrderReplayBook:
    """The released runner's patient replay: gold answers per tool name, handed out in call order
    (arguments ignored), starting over when a tool is called more often than the gold answers it."""

    answers: dict[str, list[Any]] = field(default_factory=dict)
    served: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_session(cls, session: EvalSession, *, language: str) -> OrderReplayBook:
        book = cls()
        for step in session.patient_steps(language):
            book.answers.setdefault(canonical_name(step.tool) or step.tool, []).append(step.observation)
        return book

    def advance(self, *, tool: str) -> None:
        name = canonical_name(tool) or tool
        if self.answers.get(name):
            self.served[name] = self.served.get(name, 0) + 1

    def reply(self, *, tool: str, language: str, literacy: str) -> tuple[Replayed, bool]:
        """``(reply, literacy_fallback)``; the reply's observation is ``{"patient_response": text}``."""
        name = canonical_name(tool) or tool
        golds = self.answers.get(name) or []
        if not golds:
            return Replayed({"patient_response": MISS_REPLY[language]}, hit=False), False
        index = self.served.get(name, 0)
        self.served[name] = index + 1
        text, literacy_fallback, language_fallback = _literacy_text(
            tool=name, gold=golds[index % len(golds)], language=language, literacy=literacy
        )
        return Replayed({"patient_response": text}, hit=True, language_fallback=language_fallback), literacy_fallback
