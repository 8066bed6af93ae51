"""Answer ↔ evidence: is what the gold answer cites still what the turn's gold calls return?

The number gate (:func:`scenarios.generation.gates.gate_numbers`) asks whether a number occurs
*anywhere* in the session's observations; a 20-result Bundle holds so many numbers that a value left
behind by an edited call usually still "occurs". This check is tighter and is run on every save of a
turn's content (annotations.services.gates):

* **stale value** — a number of the answer (or of a rubric item that checks a value) that the changed
  step's *previous* observation held, and that no current evidence holds any more;
* **stale name** — a lab or drug the changed step's previous observation returned, named by the answer,
  and returned by no current gold call;
* **lab value** — the number written right after a lab with numeric results that the turn's calls
  return ("PTT was 31.6 sec", "INR 3.4", "血钾为 5.8"; not "creatinine ≥ 1.5" or "INR threshold 3.0",
  which are criteria, not results) that none of that lab's results holds (value, reference range) nor
  a declared derivation: the answer cites a value the evidence does not show.

Current evidence is the turn's gold calls (arguments and observations, ``prepare_to_answer`` excluded,
its observation being the answer), those of earlier turns, the declared derivations, the requests and
``env_info``. Each finding names the value and the step (numbered from 1, as on the screens).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from scenarios.audit.numbers import Pool, derivation_sources, tokenize

PREPARE = "prepare_to_answer"
# Resource types whose name is a lab (values checked) or a drug (name only: doses are written many ways).
LAB_TYPES = ("Observation",)
DRUG_TYPES = ("MedicationRequest", "MedicationAdministration", "MedicationStatement")
# What may stand between a lab's name and the result it cites: glue words only (no comparison, no "range").
_GLUE = re.compile(
    r"[\s:=(（：,，]*"
    r"(?:(?:is|was|were|of|at|now|level|value|result|latest|most recent|measured|为|是)[\s:=(（：,，]*)*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class EvidenceStep:
    """One gold step: ``before`` is its observation before an edit (None when it did not change)."""

    idx: int
    tool: str
    arguments: Any
    observation: Any
    before: Any = None


@dataclass(frozen=True)
class Finding:
    kind: str  # stale_value | stale_name | lab_value
    where: str  # where-key of scenarios.gate_messages ("answer", "rubric" with n)
    n: int | None
    value: str  # the number as written (with its unit) or the name
    step: int  # step index (0-based; shown from 1)
    tool: str
    name: str = ""  # the lab a lab_value finding is about


@dataclass
class _Names:
    labs: dict[str, set[Decimal]] = field(default_factory=dict)  # lower-case name → its numbers
    drugs: set[str] = field(default_factory=set)

    def all(self) -> set[str]:
        return set(self.labs) | self.drugs


def _resources(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if isinstance(value.get("resourceType"), str):
            yield value
        for item in value.values():
            if isinstance(item, dict | list):
                yield from _resources(item)
    elif isinstance(value, list):
        for item in value:
            yield from _resources(item)


def _concept_names(concept: Any) -> set[str]:
    if not isinstance(concept, dict):
        return set()
    names = {concept.get("text")}
    names |= {c.get("display") for c in concept.get("coding") or [] if isinstance(c, dict)}
    out = set()
    for name in names:
        if isinstance(name, str) and len(name.strip()) >= 2:
            out.add(name.strip().lower())
            short = re.split(r"[(,\[]", name)[0].strip().lower()  # "INR(PT)" is written "INR"
            if len(short) >= 2:
                out.add(short)
    return out


def names_in(observation: Any) -> _Names:
    out = _Names()
    for res in _resources(observation):
        kind = res.get("resourceType")
        if kind in LAB_TYPES:
            if not isinstance(res.get("valueQuantity"), dict):
                continue  # a culture or a text result: no value to compare
            pool = Pool()
            pool.add_json({k: v for k, v in res.items() if k not in ("id", "subject", "encounter", "code")})
            for name in _concept_names(res.get("code")):
                out.labs.setdefault(name, set()).update(pool.values)
        elif kind in DRUG_TYPES:
            for key in ("medicationCodeableConcept", "medication"):
                out.drugs |= _concept_names(res.get(key))
    return out


def _merge(into: _Names, other: _Names) -> None:
    for name, values in other.labs.items():
        into.labs.setdefault(name, set()).update(values)
    into.drugs |= other.drugs


def _mentions(text: str, names: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each whole-word mention, longest names first, no overlaps."""
    taken: list[tuple[int, int, str]] = []
    for name in sorted(set(names), key=len, reverse=True):
        for m in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.IGNORECASE):
            if all(m.end() <= s or m.start() >= e for s, e, _ in taken):
                taken.append((m.start(), m.end(), name))
    return sorted(taken)


def _pool(*, steps: Iterable[EvidenceStep], sources: Iterable[Any]) -> Pool:
    pool = Pool()
    for step in steps:
        if step.tool == PREPARE:
            continue
        pool.add_json(step.arguments)
        pool.add_json(step.observation)
    for source in sources:
        if isinstance(source, tuple):
            pool.add_value(*source)
        else:
            pool.add_json(source)
    return pool


def check(
    *,
    texts: list[tuple[str, int | None, str]],
    steps: list[EvidenceStep],
    earlier_steps: Iterable[EvidenceStep] = (),
    derivations: Any = (),
    context_texts: Iterable[str] = (),
) -> list[Finding]:
    """Findings for ``texts`` (``(where, n, text)``: the answer, value rubric items) of a turn whose gold
    steps are ``steps`` (with ``before`` on the ones an edit changed)."""
    earlier = list(earlier_steps)
    derived = derivation_sources(derivations)
    now = _pool(steps=[*steps, *earlier], sources=[*derived, *context_texts])
    derived_pool = _pool(steps=[], sources=derived)
    current = _Names()
    for step in [*steps, *earlier]:
        if step.tool != PREPARE:
            _merge(current, names_in(step.observation))
    own = {s.idx: names_in(s.observation) for s in steps if s.tool != PREPARE}
    changed = [s for s in steps if s.before is not None and s.before != s.observation and s.tool != PREPARE]
    findings: list[Finding] = []
    for where, n, text in texts:
        tokens = tokenize(text or "")
        reported: set[Decimal] = set()
        for step in changed:
            before = _pool(steps=[EvidenceStep(step.idx, step.tool, step.arguments, step.before)], sources=[])
            for number in tokens.numbers:
                if number.value in before.values and number.value not in now.values and number.value not in reported:
                    reported.add(number.value)
                    shown = f"{number.text} {number.unit}" if number.unit else number.text
                    findings.append(Finding("stale_value", where, n, shown, step.idx, step.tool))
            gone = names_in(step.before).all() - current.all()
            for start, end, _ in _mentions(text or "", gone):  # shown as the answer writes it
                findings.append(Finding("stale_name", where, n, text[start:end], step.idx, step.tool))
        findings += _lab_values(
            where=where, n=n, text=text or "", own=own, steps=steps, derived=derived_pool, skip=reported
        )
    return findings


def _lab_values(
    *,
    where: str,
    n: int | None,
    text: str,
    own: dict[int, _Names],
    steps: list[EvidenceStep],
    derived: Pool,
    skip: set[Decimal],
) -> list[Finding]:
    """Numbers written after a lab this turn's calls return that none of its results holds."""
    labs: dict[str, set[Decimal]] = {}
    step_of: dict[str, EvidenceStep] = {}
    for step in steps:
        for name, values in own.get(step.idx, _Names()).labs.items():
            labs.setdefault(name, set()).update(values)
            step_of.setdefault(name, step)
    out: list[Finding] = []
    for start, end, name in _mentions(text, labs):
        glue = _GLUE.match(text, end)
        number = _first_number(text[glue.end() : glue.end() + 24]) if glue else None
        if number is None or number.value in labs[name] or number.value in derived.values or number.value in skip:
            continue
        step = step_of[name]
        shown = f"{number.text} {number.unit}" if number.unit else number.text
        out.append(Finding("lab_value", where, n, shown, step.idx, step.tool, name=text[start:end]))
    return out


def _first_number(text: str) -> Any:
    """The number a text starts with (after the glue words), or None."""
    match = re.match(r"[\d０-９]", text)
    tokens = tokenize(text).numbers if match else []
    return tokens[0] if tokens else None
