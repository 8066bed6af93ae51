"""The single validator of rubric ``check`` shapes (the rules judge relies on it)."""

import pytest

from scenarios.rubric_checks import validate_rubric_check

VALID = [
    None,
    {"kind": "value_unit", "value": 1.4, "unit": "mg/dL", "tolerance": 0.05},
    {"kind": "value_unit", "value": 5, "unit": ""},
    {"kind": "term", "en": ["hyperkalemia", "hyperkalaemia"], "zh": ["高钾血症"]},
    {"kind": "term", "en": [], "zh": ["高钾血症"]},
    {"kind": "write_call", "tool": "MedicationRequest.create", "params": {"medication": "apixaban", "dose": "2.5 mg"}},
    {"kind": "write_call", "tool": "Flag.create", "params": {}},
    {"kind": "must_not_recommend", "en": ["ibuprofen"], "zh": ["布洛芬"]},
]

INVALID = [
    ([1, 2], "must be an object or null"),
    ({"value": 1}, "unknown kind None"),
    ({"kind": "regex", "pattern": "x"}, "unknown kind 'regex'"),
    ({"kind": "value_unit", "value": 1.4}, "value_unit: missing unit"),
    ({"kind": "value_unit", "value": "1.4", "unit": "mg/dL"}, "'value' must be a finite number"),
    ({"kind": "value_unit", "value": True, "unit": "mg/dL"}, "'value' must be a finite number"),
    ({"kind": "value_unit", "value": float("nan"), "unit": "mg/dL"}, "'value' must be a finite number"),
    ({"kind": "value_unit", "value": 1, "unit": "mg/dL", "tolerance": -1}, "'tolerance' must be a number >= 0"),
    ({"kind": "value_unit", "value": 1, "unit": None}, "'unit' must be a string"),
    ({"kind": "value_unit", "value": 1, "unit": "mg", "units": "x"}, "unknown key units"),
    ({"kind": "term", "en": ["a"]}, "term: missing zh"),
    ({"kind": "term", "en": [], "zh": []}, "at least one phrase"),
    ({"kind": "term", "en": "hyperkalemia", "zh": []}, "'en' must be a list of non-empty strings"),
    ({"kind": "term", "en": [" "], "zh": []}, "'en' must be a list of non-empty strings"),
    ({"kind": "write_call", "tool": "Observation.search", "params": {}}, "'tool' must be one of"),
    ({"kind": "write_call", "tool": "MedicationRequest.create", "params": []}, "'params' must be an object"),
    ({"kind": "must_not_recommend", "en": [], "zh": [3]}, "'zh' must be a list of non-empty strings"),
]


@pytest.mark.parametrize("check", VALID)
def test_valid_shapes(check) -> None:
    validate_rubric_check(check)


@pytest.mark.parametrize("check,message", INVALID)
def test_invalid_shapes(check, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        validate_rubric_check(check)
    assert message in str(exc.value)
