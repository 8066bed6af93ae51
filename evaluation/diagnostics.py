"""Tool-call diagnostics of one turn: the calls the model made against the gold calls, by tool + key arguments.

Two calls are *the same call* when the tool name and the normalised **key arguments** are equal.
Arguments are first put in the released contract's terms (:mod:`evaluation.arguments`): alias names
(``patient``, ``symptom``, ``test_name``), placeholders of optional parameters (``""``, ``0``) and old
enum values map to what the tool runs, and a gold call stored by an earlier version (``encounter``,
``code`` of a drug, an order's ``status: on-hold``) is upgraded, so each compares as the contract call.
Key arguments are the ones that decide what a call returns or does (:data:`KEY_ARGUMENTS`, e.g.
``code`` and ``category`` of ``Observation.search``, ``drug`` of the adherence question, drug,
dose, route and frequency of ``MedicationRequest.create``). Everything else is ignored, as
patient replay does (:mod:`evaluation.replay`): the ids the harness fills in (``subject_id``,
``session_id``, ``hadm_id``), ``_count``, date windows, and free wording (``indication``, ``note``,
a flag's alert text). A key argument left out counts as its declared default. Strings compare
case-insensitively with whitespace collapsed and no space between a number and its unit
(``"2.5 MG"`` = ``"2.5mg"``). A tool outside the registry keeps every argument but the ignored ones.

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

from ehr.fhir import canonical_name
from evaluation.arguments import canonical_arguments

# Contract names only (calls are compared in the contract's terms).
KEY_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "Patient.read": (),
    "Encounter.search": (),
    "Condition.search": ("code", "clinical_status"),
    "Observation.search": ("category", "code"),
    "MedicationRequest.search": ("medication", "status"),
    "MedicationAdministration.search": ("medication",),
    "DiagnosticReport.search": ("report_type",),
    "DocumentReference.search": ("type_code", "keyword"),
    "CarePlan.search": ("category",),
    "Procedure.search": (),
    "AllergyIntolerance.search": (),
    "patient.get_symptom_history": ("query",),
    "patient.get_medication_adherence": ("drug",),
    "patient.get_social_history": (),
    "patient.get_functional_status": (),
    "patient.get_pain_assessment": (),
    # A dose of 'hold' is how the contract holds a drug (the old status: on-hold).
    "MedicationRequest.create": ("medication", "dose", "route", "frequency"),
    "ServiceRequest.create": ("service_type", "priority"),
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
        "indication",
        "detail",
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


def key_arguments(*, tool: str, arguments: Mapping[str, Any] | None, stored: bool = False) -> dict[str, Any]:
    """The normalised key arguments of one call (see the module docstring); ``stored``: a gold call."""
    name = canonical_name(tool) or tool
    given = canonical_arguments(tool=name, arguments=arguments, stored=stored)
    keys = KEY_ARGUMENTS.get(name)
    if keys is None:
        keys = tuple(k for k in given if k not in IGNORED_ARGUMENTS)
    return {k: _normalise(given[k]) for k in keys if given.get(k) is not None and given.get(k) != ""}


def _calls(pairs: Sequence[tuple[str, Mapping[str, Any] | None]], *, stored: bool) -> list[Call]:
    calls = []
    for tool, args in pairs:
        name = canonical_name(tool) or tool
        if name != NOT_A_CALL:
            calls.append(Call(name, key_arguments(tool=name, arguments=args, stored=stored)))
    return calls


def _shared(a: Call, b: Call) -> int:
    return sum(1 for k, v in a.arguments.items() if b.arguments.get(k) == v)


def compare_calls(
    *, gold: Sequence[tuple[str, Mapping[str, Any] | None]], made: Sequence[tuple[str, Mapping[str, Any] | None]]
) -> dict[str, Any]:
    """Missing, extra and argument-mismatched calls of ``made`` against ``gold`` (``(tool, arguments)`` pairs)."""
    gold_left, made_left = _calls(gold, stored=True), _calls(made, stored=False)
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
