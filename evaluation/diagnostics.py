"""Tool-call diagnostics of one turn: the calls the model made against the gold calls, by tool + key arguments.

Two calls are *the same call* when the tool name and the normalised **key arguments** are equal.
Key arguments are the ones that decide what a call returns or does (:data:`KEY_ARGUMENTS`, e.g.
``code`` and ``category`` of ``Observation.search``, ``medication`` of the adherence question, drug,
dose, route, frequency and status of ``MedicationRequest.create``). Everything else is ignored, as
patient replay does (:mod:`evaluation.replay`): the ids the harness fills in (``patient``,
``subject_id``, ``session_id``, ``encounter``), ``_count``, date windows, and free wording
(``question``, ``reason``, ``note``, a flag's alert text). A key argument left out counts as its
declared default (``status`` of an order is ``active``). Strings compare case-insensitively with
whitespace collapsed and no space between a number and its unit (``"2.5 MG"`` = ``"2.5mg"``).
A tool outside the registry keeps every argument but the ignored ones.

Matching, as multisets: equal calls pair off first; of what is left, a gold call and a made call of
the same tool pair off as an **argument mismatch** (most equal key arguments first, then in order);
the gold calls still left are **missing**, the made calls still left are **extra**. Each gold call
thus lands in exactly one of: matched, ``argument_mismatches``, ``missing_calls``. Result::

    {"missing_calls": ["Observation.search(category=laboratory, code=potassium)", ...],  # sorted labels
     "extra_calls": ["Condition.search", ...],
     "argument_mismatches": [{"tool": "Observation.search",
                              "gold": {"category": "laboratory", "code": "potassium"},
                              "made": {"code": "sodium"}}, ...]}

``prepare_to_answer`` is never a gold call nor counted as made. Invalid calls the model made (bad
arguments, unknown tool) count as made: they are calls it chose to make.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehr.fhir import REGISTRY

KEY_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "Patient.read": (),
    "Encounter.search": ("status",),
    "Condition.search": ("code",),
    "Observation.search": ("category", "code"),
    "MedicationRequest.search": ("code", "status"),
    "MedicationAdministration.search": ("code",),
    "DiagnosticReport.search": ("code", "section"),
    "DocumentReference.search": ("type", "section"),
    "CarePlan.search": (),
    "Procedure.search": ("code",),
    "AllergyIntolerance.search": (),
    "patient.get_symptom_history": ("symptom",),
    "patient.get_medication_adherence": ("medication",),
    "patient.get_social_history": ("topic",),
    "patient.get_functional_status": ("domain",),
    "patient.get_pain_assessment": ("location",),
    "MedicationRequest.create": ("medication", "dose", "route", "frequency", "status"),
    "ServiceRequest.create": ("code", "category"),
    "Flag.create": ("category",),
}
# For a tool without a KEY_ARGUMENTS entry: harness-filled ids, paging, date windows and free wording.
IGNORED_ARGUMENTS = frozenset(
    {
        "patient",
        "subject_id",
        "session_id",
        "encounter",
        "hadm_id",
        "language",
        "_count",
        "date_from",
        "date_to",
        "question",
        "reason",
        "note",
        "summary",
    }
)
NOT_A_CALL = "prepare_to_answer"
_NUMBER_UNIT = re.compile(r"(\d)\s+(?=[^\W\d_])")


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]  # normalised key arguments

    @property
    def key(self) -> tuple[str, str]:
        return self.tool, json.dumps(self.arguments, sort_keys=True, ensure_ascii=False, default=str)

    def label(self) -> str:
        if not self.arguments:
            return self.tool
        inner = ", ".join(f"{k}={v}" for k, v in sorted(self.arguments.items()))
        return f"{self.tool}({inner})"


def _normalise(value: Any) -> Any:
    if isinstance(value, str):
        return _NUMBER_UNIT.sub(r"\1", " ".join(value.casefold().split()))
    return value


def key_arguments(*, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The normalised key arguments of one call (see the module docstring)."""
    given = arguments if isinstance(arguments, Mapping) else {}
    keys = KEY_ARGUMENTS.get(tool)
    if keys is None:
        keys = tuple(k for k in given if k not in IGNORED_ARGUMENTS)
    params = {p.name: p for p in REGISTRY[tool].params} if tool in REGISTRY else {}
    out: dict[str, Any] = {}
    for key in keys:
        value = given.get(key)
        if value is None or value == "":
            value = params[key].default if key in params else None
        if value is not None and value != "":
            out[key] = _normalise(value)
    return out


def _calls(pairs: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[Call]:
    return [Call(tool, key_arguments(tool=tool, arguments=args)) for tool, args in pairs if tool != NOT_A_CALL]


def _shared(a: Call, b: Call) -> int:
    return sum(1 for k, v in a.arguments.items() if b.arguments.get(k) == v)


def compare_calls(
    *, gold: Sequence[tuple[str, Mapping[str, Any] | None]], made: Sequence[tuple[str, Mapping[str, Any] | None]]
) -> dict[str, Any]:
    """Missing, extra and argument-mismatched calls of ``made`` against ``gold`` (``(tool, arguments)`` pairs)."""
    gold_left, made_left = _calls(gold), _calls(made)
    for call in list(gold_left):
        same = next((m for m in made_left if m.key == call.key), None)
        if same is not None:
            gold_left.remove(call)
            made_left.remove(same)
    candidates = sorted(
        (-_shared(g, m), i, j) for i, g in enumerate(gold_left) for j, m in enumerate(made_left) if g.tool == m.tool
    )
    paired_gold: set[int] = set()
    paired_made: set[int] = set()
    mismatches = []
    for _, i, j in candidates:
        if i in paired_gold or j in paired_made:
            continue
        paired_gold.add(i)
        paired_made.add(j)
        mismatches.append({"tool": gold_left[i].tool, "gold": gold_left[i].arguments, "made": made_left[j].arguments})
    mismatches.sort(key=lambda m: (m["tool"], json.dumps([m["gold"], m["made"]], sort_keys=True, default=str)))
    return {
        "missing_calls": sorted(c.label() for i, c in enumerate(gold_left) if i not in paired_gold),
        "extra_calls": sorted(c.label() for j, c in enumerate(made_left) if j not in paired_made),
        "argument_mismatches": mismatches,
    }
