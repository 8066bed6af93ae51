"""Tool-call arguments in the released contract's terms: the one form diagnostics, replay and the judge compare.

A model may call with alias names (``patient=``, ``symptom=``), placeholders for optional parameters
(``""``, ``0``) or older enum values (``category=lab``); gold stored by earlier versions (an old
snapshot) may carry the FHIR-style names (``encounter``, ``code`` of a drug, an order's ``status:
on-hold``). The tool layer runs all of these as the same call, so whatever compares calls compares
the arguments :func:`ehr.fhir.params.clean_arguments` would run them with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ehr.fhir import REGISTRY, canonical_name
from ehr.fhir.errors import ToolError
from ehr.fhir.legacy import upgrade_arguments
from ehr.fhir.params import Tool, clean_arguments

# Stands in for a required argument the call left out: a comparison does not need it, the tool would refuse it.
_UNSET = object()


def _fills(spec: Tool) -> dict[str, Any]:
    return {p.name: _UNSET for p in spec.params if p.required}


def _one_by_one(spec: Tool, given: dict[str, Any]) -> dict[str, Any]:
    """Arguments cleaned one at a time, so that one value the tool refuses does not hide the others.

    A refused value is kept as given under its contract name (the comparison then shows it).
    """
    out: dict[str, Any] = {}
    # A contract name given outright wins over an alias of it, as in clean_arguments.
    for name, value in sorted(given.items(), key=lambda kv: spec.contract_name(kv[0]) != kv[0]):
        target = spec.contract_name(name)
        if target is None or target in out:
            continue
        try:
            out[target] = clean_arguments(tool=spec, arguments={name: value}, filled=_fills(spec)).args[target]
        except ToolError:
            out[target] = value
    for p in spec.params:
        out.setdefault(p.name, p.default)
    return out


def canonical_arguments(*, tool: str, arguments: Mapping[str, Any] | None, stored: bool = False) -> dict[str, Any]:
    """Contract name → value the tool would run ``arguments`` with, without the absent ones.

    Alias names are mapped and unknown names dropped; optional parameters left out or given as
    placeholders take their declared default (absent when it has none); required ones left out are
    absent. ``stored``: gold or rubric data of an earlier version, whose old shapes are upgraded first
    (:func:`ehr.fhir.legacy.upgrade_arguments`: an order's ``status: on-hold`` is ``dose: hold``).
    A tool outside the registry keeps its arguments as given.
    """
    given = dict(arguments) if isinstance(arguments, Mapping) else {}
    name = canonical_name(tool) if isinstance(tool, str) else None
    if name is None:
        return given
    spec = REGISTRY[name]
    if stored:
        given, _ = upgrade_arguments(tool=name, arguments=given)
    try:
        args = clean_arguments(tool=spec, arguments=given, filled=_fills(spec)).args
    except ToolError:
        args = _one_by_one(spec, given)
    return {k: v for k, v in args.items() if v is not None and v is not _UNSET}
