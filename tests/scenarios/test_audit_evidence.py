"""Answer ↔ evidence (scenarios.audit.evidence): the issue 32 case (a gold call's code changed from
"ptt" to "inr", the answer still citing the PTT value), a lab value the results do not hold, and what
must not be flagged (reference ranges, declared derivations, values from earlier turns)."""

from __future__ import annotations

from scenarios.audit.evidence import EvidenceStep, check


def lab(name: str, value: float, unit: str, low: float | None = None, high: float | None = None) -> dict:
    resource = {
        "resourceType": "Observation",
        "id": "lab-1",
        "code": {"text": name, "coding": [{"system": "mimic-iv/itemid", "code": "51275", "display": name}]},
        "effectiveDateTime": "2151-01-22 05:28:00",
        "valueQuantity": {"value": value, "unit": unit},
    }
    if low is not None:
        resource["referenceRange"] = [{"low": {"value": low, "unit": unit}, "high": {"value": high, "unit": unit}}]
    return {"resourceType": "Bundle", "type": "searchset", "total": 1, "entry": [{"resource": resource}]}


PTT = lab("PTT", 31.6, "sec", 25, 36.5)
INR = lab("INR(PT)", 1.1, "", 0.9, 1.1)
ANSWER = "PTT was 31.6 sec on 2151-01-22 05:28 (reference 25-36.5)."


def _step(observation, before=None, code="ptt"):
    return EvidenceStep(0, "Observation.search", {"subject_id": 1, "code": code}, observation, before)


def test_changed_code_makes_the_cited_value_and_lab_stale_naming_the_step():
    findings = check(texts=[("answer", None, ANSWER)], steps=[_step(INR, before=PTT, code="inr")])
    kinds = {(f.kind, f.value, f.step, f.tool) for f in findings}
    assert ("stale_value", "31.6 sec", 0, "Observation.search") in kinds
    assert ("stale_name", "PTT", 0, "Observation.search") in kinds


def test_unchanged_evidence_is_quiet_ranges_and_derivations_included():
    assert check(texts=[("answer", None, ANSWER)], steps=[_step(PTT)]) == []
    derived = [{"name": "ratio", "inputs": {"ptt": 31.6}, "result": 0.87, "formula": "ptt / 36.5"}]
    text = "PTT 31.6 sec, 0.87 of the upper limit."
    assert check(texts=[("answer", None, text)], steps=[_step(PTT)], derivations=derived) == []


def test_a_lab_value_its_results_do_not_hold_is_flagged_on_every_save():
    findings = check(texts=[("rubric", 2, "States PTT 45.2 sec")], steps=[_step(PTT)])
    assert [(f.kind, f.where, f.n, f.value, f.name) for f in findings] == [
        ("lab_value", "rubric", 2, "45.2 sec", "PTT")
    ]


def test_criteria_and_text_results_are_not_cited_values():
    """From records of the release's shape: a threshold after a lab name is a criterion, not a result;
    a culture has no value to compare ("urine culture grew E. coli (>100,000 CFU/mL)")."""
    culture = {"resourceType": "Observation", "code": {"text": "URINE CULTURE"}, "valueString": "ESCHERICHIA COLI"}
    steps = [_step(PTT), EvidenceStep(1, "Observation.search", {}, {"entry": [{"resource": culture}]})]
    texts = [
        ("answer", None, "PTT ≥ 60 sec would call for a dose change; PTT threshold 45 sec; PTT rose from 28 to 31.6."),
        ("answer", None, "The urine culture grew E. coli (>100,000 CFU/mL)."),
        ("answer", None, "最近一次 PTT 为 31.6 秒。"),
    ]
    assert check(texts=texts, steps=steps) == []
    assert [f.value for f in check(texts=[("answer", None, "PTT 为 40.2 秒。")], steps=steps)] == ["40.2"]


def test_a_value_of_an_earlier_turn_is_not_stale():
    earlier = [EvidenceStep(0, "Observation.search", {"code": "ptt"}, PTT)]
    findings = check(
        texts=[("answer", None, "INR 1.1; PTT was 31.6 sec.")],
        steps=[_step(INR, before=lab("INR(PT)", 1.4, ""), code="inr")],
        earlier_steps=earlier,
    )
    assert findings == []
