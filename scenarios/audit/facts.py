"""Facts of a tool result, and how a stored gold observation differs from a fresh re-execution.

A result is reduced to *facts*, per resource (keyed ``ResourceType/id``, so entry order and
``total`` never matter), per fact path (``valueQuantity``, ``code``, ``effectiveDateTime``,
``dosageInstruction[0].doseAndRate[0].doseQuantity`` …). What counts as a fact:

* codes: every ``coding`` list becomes one fact, the sorted ``system|code`` pairs (its ``display``
  and the concept's ``text`` are labels of the code, not facts);
* quantities: ``value`` + ``unit`` of any dict that has a numeric ``value`` (valueQuantity,
  doseQuantity, referenceRange low/high, components), numbers compared as decimals (0.90 == 0.9);
* every other scalar leaf: ids, statuses, ``value[x]``, times (``effectiveDateTime``, ``authoredOn``,
  ``period.start`` …), references, extension values (lists of extensions are keyed by ``url``,
  components by their code, note sections by their title);
* a ``text`` is a fact only where nothing else carries it (a concept without coding such as the
  drug of a MedicationAdministration, a route, a note section's content); next to other facts it is
  a rendering of them (``dosageInstruction.text``) and is ignored. ``display``, ``title`` and
  ``contentType`` are always presentation. Texts are compared with whitespace collapsed.

An error result (``{"error": ...}``) has the single fact ``error`` (its message).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

# Presentation: never a fact.
_LABEL_KEYS = frozenset({"display", "title", "contentType", "fullUrl", "meta", "search", "warnings"})
# Timestamps of a schedule, not of something that happened: not evidence of data after the cutoff.
_PLAN_TIME_MARKERS = ("scheduletime",)
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?")
_SPACE = re.compile(r"\s+")


def normalise_number(value: int | float | Decimal | str) -> str:
    """``0.90`` → ``0.9``, ``5.0`` → ``5``, ``1E+1`` never (plain notation)."""
    try:
        dec = Decimal(str(value)).normalize()
    except InvalidOperation:
        return str(value)
    text = format(dec, "f")
    return "0" if text in ("-0", "") else text


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return normalise_number(value)
    if value is None:
        return "null"
    return _SPACE.sub(" ", str(value)).strip()


def parse_time(text: str) -> dt.datetime | None:
    """A ``YYYY-MM-DD[ HH:MM[:SS]]`` string as a naive datetime (a date alone is its 00:00)."""
    match = _DATE_RE.match(text.strip()) if isinstance(text, str) else None
    if not match:
        return None
    y, mo, d, h, mi, s = (int(g) if g else 0 for g in match.groups())
    try:
        return dt.datetime(y, mo, d, h, mi, s)
    except ValueError:
        return None


def _is_quantity(node: dict[str, Any]) -> bool:
    value = node.get("value")
    return isinstance(value, int | float) and not isinstance(value, bool)


def _list_key(item: Any, index: int) -> str:
    """A stable key for a list item: what identifies it, else its position."""
    if isinstance(item, dict):
        if isinstance(item.get("url"), str):
            return item["url"]
        code = item.get("code")
        if isinstance(code, dict):
            codings = code.get("coding") or []
            if codings and isinstance(codings[0], dict) and codings[0].get("code"):
                return f"{codings[0].get('system', '')}|{codings[0]['code']}"
            if isinstance(code.get("text"), str):
                return code["text"]
        if isinstance(item.get("title"), str) and "text" in item:
            return item["title"]
    return str(index)


def _walk(node: Any, path: str, out: dict[str, str]) -> None:
    if isinstance(node, dict):
        rest = {k: v for k, v in node.items() if k not in _LABEL_KEYS}
        if isinstance(rest.get("coding"), list):
            pairs = sorted(
                f"{c.get('system', '')}|{c.get('code', '')}" for c in rest.pop("coding") if isinstance(c, dict)
            )
            out[f"{path}.coding" if path else "coding"] = ", ".join(pairs)
            rest.pop("text", None)
        elif _is_quantity(rest):
            unit = rest.pop("unit", None) or rest.pop("code", None) or ""
            out[path or "value"] = f"{normalise_number(rest.pop('value'))} {unit}".strip()
            rest.pop("system", None)
        if "text" in rest and len(rest) > 1:
            rest.pop("text")  # a rendering of the facts beside it
        for key, value in rest.items():
            _walk(value, f"{path}.{key}" if path else key, out)
    elif isinstance(node, list):
        seen: dict[str, int] = {}
        for i, item in enumerate(node):
            key = _list_key(item, i)
            n = seen.get(key, 0)
            seen[key] = n + 1
            _walk(item, f"{path}[{key}]" if n == 0 else f"{path}[{key}#{n}]", out)
    else:
        out[path or "value"] = _scalar(node)


def resource_facts(resource: Any) -> dict[str, str]:
    """``{fact path: normalised value}`` of one resource (its ``resourceType`` and ``id`` are its key)."""
    if not isinstance(resource, dict):
        return {"value": _scalar(resource)}
    out: dict[str, str] = {}
    _walk({k: v for k, v in resource.items() if k not in ("resourceType", "id")}, "", out)
    return out


@dataclass
class ResultFacts:
    """The facts of one tool result: resources by key, or an error, or a non-FHIR value."""

    resources: dict[str, dict[str, str]] = field(default_factory=dict)
    error: str | None = None


def result_facts(result: Any) -> ResultFacts:
    if isinstance(result, dict) and "error" in result:
        return ResultFacts(error=_scalar(result.get("error")))
    if isinstance(result, dict) and result.get("resourceType") == "Bundle":
        resources: dict[str, dict[str, str]] = {}
        for i, entry in enumerate(result.get("entry") or []):
            res = entry.get("resource") if isinstance(entry, dict) else None
            resources[resource_key(res, i)] = resource_facts(res)
        return ResultFacts(resources=resources)
    if isinstance(result, dict) and "resourceType" in result:
        return ResultFacts(resources={resource_key(result, 0): resource_facts(result)})
    return ResultFacts(resources={"value": resource_facts(result)})


def resource_key(resource: Any, index: int) -> str:
    if not isinstance(resource, dict):
        return f"#{index}"
    kind = resource.get("resourceType") or "Resource"
    ident = resource.get("id")
    return f"{kind}/{ident}" if ident not in (None, "") else f"{kind}#{index}"


@dataclass(frozen=True)
class Difference:
    """``missing``: in the stored observation, not returned now; ``extra``: returned now, not stored;
    ``changed``: a fact of a resource both have; ``error``: one of them is an error."""

    kind: str
    resource: str
    fact: str = ""
    stored: str | None = None
    now: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "resource": self.resource, "fact": self.fact, "stored": self.stored, "now": self.now}

    def describe(self) -> str:
        if self.kind == "missing":
            return f"{self.resource} stored but not returned now"
        if self.kind == "extra":
            return f"{self.resource} returned now but not stored"
        if self.kind == "error":
            return f"stored {self.stored or 'a result'}, now {self.now or 'a result'}"
        return f"{self.resource} {self.fact}: {self.stored if self.stored is not None else '(none)'} → " + (
            self.now if self.now is not None else "(none)"
        )


def compare(*, stored: ResultFacts, fresh: ResultFacts) -> list[Difference]:
    """What differs on facts; empty when the re-execution reproduces the stored observation."""
    if stored.error is not None or fresh.error is not None:
        if stored.error == fresh.error:
            return []
        return [
            Difference(
                "error",
                "",
                stored=f"error: {stored.error}" if stored.error is not None else None,
                now=f"error: {fresh.error}" if fresh.error is not None else None,
            )
        ]
    out: list[Difference] = []
    for key in stored.resources.keys() - fresh.resources.keys():
        out.append(Difference("missing", key))
    for key in fresh.resources.keys() - stored.resources.keys():
        out.append(Difference("extra", key))
    for key in stored.resources.keys() & fresh.resources.keys():
        a, b = stored.resources[key], fresh.resources[key]
        for fact in sorted(a.keys() | b.keys()):
            if a.get(fact) != b.get(fact):
                out.append(Difference("changed", key, fact, a.get(fact), b.get(fact)))
    order = {"error": 0, "changed": 1, "missing": 2, "extra": 3}
    return sorted(out, key=lambda d: (order[d.kind], d.resource, d.fact))


@dataclass(frozen=True)
class Leak:
    resource: str
    fact: str
    value: str

    def to_dict(self) -> dict[str, str]:
        return {"resource": self.resource, "fact": self.fact, "value": self.value}


def leaks(*, stored: ResultFacts, cutoff: dt.datetime, only_types: frozenset[str] | None = None) -> list[Leak]:
    """Facts of the stored observation dated on/after ``cutoff`` (naive, the record's wall time).

    ``only_types``: resource types that count (``{"Observation"}`` under release bounds).
    """
    out = []
    for key, facts in sorted(stored.resources.items()):
        if only_types is not None and key.split("/", 1)[0].split("#", 1)[0] not in only_types:
            continue
        for fact, value in sorted(facts.items()):
            if any(marker in fact for marker in _PLAN_TIME_MARKERS):
                continue
            when = parse_time(value)
            if when is not None and when >= cutoff:
                out.append(Leak(key, fact, value))
    return out
