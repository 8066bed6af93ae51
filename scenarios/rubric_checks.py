"""The machine-checkable form of a rubric item, and the one function that validates it.

Shapes (``check`` is ``None`` when an item can only be judged by reading)::

    {"kind": "value_unit", "value": 1.4, "unit": "mg/dL", "tolerance": 0.05}   # tolerance optional, >= 0
    {"kind": "term", "en": ["hyperkalaemia", "hyperkalemia"], "zh": ["高钾血症"]}
    {"kind": "write_call", "tool": "MedicationRequest.create", "params": {"medication": "furosemide"}}
    {"kind": "must_not_recommend", "en": ["ibuprofen"], "zh": ["布洛芬"]}
    {"kind": "all_of", "checks": [{"kind": "value_unit", …}, {"kind": "value_unit", …}]}  # every part must hold

``all_of`` is one item that states several facts, each checkable ("cites potassium as 3.2 mEq/L and magnesium
as 1.5 mg/dL", issue 33): two to six checks of the other kinds, all of which must pass (no nesting).

``write_call`` params name parameters of the write tool's released contract (e.g. ``{"dose": "hold"}``,
never the FHIR-style ``status``/``replaces`` of earlier versions): :func:`write_call_contract_problems`
says where they do not (the generator's gates refuse such a check; stored checks of earlier versions
are rewritten by migration 0002, so the shape check below does not refuse them on save).
``term`` and ``must_not_recommend`` need at least one non-empty phrase in either language. The rules
judge, the importer, the model's ``save()`` and admin forms all call :func:`validate_rubric_check`.
"""

from __future__ import annotations

import math
from typing import Any

CHECK_KINDS = ("value_unit", "term", "write_call", "must_not_recommend", "all_of")
MAX_PARTS = 6
_KEYS = {
    "value_unit": ({"kind", "value", "unit"}, {"tolerance"}),
    "term": ({"kind", "en", "zh"}, set()),
    # legacy_params: parameters of an earlier tool contract kept by the migration; never scored
    "write_call": ({"kind", "tool", "params"}, {"legacy_params"}),
    "must_not_recommend": ({"kind", "en", "zh"}, set()),
    "all_of": ({"kind", "checks"}, set()),
}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _phrases(check: dict[str, Any]) -> None:
    for lang in ("en", "zh"):
        value = check[lang]
        if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
            raise ValueError(f"{check['kind']}: '{lang}' must be a list of non-empty strings")
    if not check["en"] and not check["zh"]:
        raise ValueError(f"{check['kind']}: give at least one phrase in 'en' or 'zh'")


def write_tool_names() -> tuple[str, ...]:
    from ehr.fhir import REGISTRY  # late: models import this module, and the tool layer imports ehr models

    return tuple(name for name, tool in REGISTRY.items() if tool.kind == "write")


def write_call_contract_problems(check: Any) -> list[str]:
    """What in a (shape-valid) ``write_call`` check does not fit the released tool contract: parameter names
    the tool lacks, enum values outside the contract. Empty for any other kind of check."""
    from ehr.fhir import REGISTRY  # late, as above

    if isinstance(check, dict) and check.get("kind") == "all_of" and isinstance(check.get("checks"), list):
        return [p for part in check["checks"] for p in write_call_contract_problems(part)]
    if not isinstance(check, dict) or check.get("kind") != "write_call" or check.get("tool") not in REGISTRY:
        return []
    tool, params = check["tool"], check.get("params") or {}
    contract = {p.name: p for p in REGISTRY[tool].params}
    problems = []
    if unknown := sorted(set(params) - set(contract)):
        noun = "parameter" if len(unknown) == 1 else "parameters"
        problems.append(f"{tool} has no {noun} {', '.join(unknown)} (it takes {', '.join(contract)})")
    for name, value in params.items():
        enum = contract[name].enum if name in contract else None
        if enum and value not in enum:
            problems.append(f"{tool} {name} must be one of {', '.join(enum)}, got {value!r}")
    return problems


def validate_rubric_check(check: Any) -> None:
    """Raise ``ValueError`` (message says what is wrong) unless ``check`` is ``None`` or a valid shape."""
    if check is None:
        return
    if not isinstance(check, dict):
        raise ValueError(f"must be an object or null, got {type(check).__name__}")
    kind = check.get("kind")
    if kind not in _KEYS:
        raise ValueError(f"unknown kind {kind!r} (expected one of: {', '.join(CHECK_KINDS)})")
    required, optional = _KEYS[kind]
    if missing := sorted(required - check.keys()):
        raise ValueError(f"{kind}: missing {', '.join(missing)}")
    if unknown := sorted(check.keys() - required - optional):
        raise ValueError(f"{kind}: unknown {'key' if len(unknown) == 1 else 'keys'} {', '.join(unknown)}")
    if kind == "value_unit":
        if not _is_number(check["value"]):
            raise ValueError("value_unit: 'value' must be a finite number")
        if not isinstance(check["unit"], str):
            raise ValueError("value_unit: 'unit' must be a string (empty for unitless values)")
        tolerance = check.get("tolerance", 0)
        if not _is_number(tolerance) or tolerance < 0:
            raise ValueError("value_unit: 'tolerance' must be a number >= 0")
    elif kind == "all_of":
        parts = check["checks"]
        if not isinstance(parts, list) or not 2 <= len(parts) <= MAX_PARTS:
            raise ValueError(f"all_of: 'checks' must be a list of 2 to {MAX_PARTS} checks")
        for i, part in enumerate(parts, 1):
            if not isinstance(part, dict) or part.get("kind") == "all_of":
                raise ValueError(f"all_of: part {i} must be a check of another kind (no nesting)")
            try:
                validate_rubric_check(part)
            except ValueError as exc:
                raise ValueError(f"all_of: part {i}: {exc}") from exc
    elif kind == "write_call":
        if check["tool"] not in write_tool_names():
            raise ValueError(f"write_call: 'tool' must be one of {', '.join(write_tool_names())}")
        if not isinstance(check["params"], dict):
            raise ValueError("write_call: 'params' must be an object")
    else:
        _phrases(check)
