"""The release's tool layer reproduced on facts (issue 33), on a patient and a record nobody took from our output.

Cases: the hand-written patient of ``release_patient.py`` (per-patient layout, pandas spelling) and
the gold observations in ``data/release_contract_gold.json``, which the release's own tool layer
returned for these calls on those rows (run outside the repository; 17 calls over every EHR tool:
Patient, Encounter, Condition, Observation labs and vitals, MedicationRequest, MedicationAdministration,
Procedure, DocumentReference, DiagnosticReport, CarePlan, AllergyIntolerance); the record of
``release_contract_record.py`` (hand-written from the session format and the semantics file).
The MedicationRequest status rule and the always-``completed`` emar status are semantics file §1.
"""

from __future__ import annotations

import copy
import datetime as dt
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from ehr.fhir import ToolContext, execute_tool
from ehr.importer import import_mimic_directory
from scenarios.audit import audit_sessions
from scenarios.audit.canonical import canonical, compare_canonical
from scenarios.models import Session
from tests.scenarios import release_contract_record, release_patient

pytestmark = pytest.mark.django_db
GOLD = release_contract_record.gold_calls()


@pytest.fixture
def patient(tmp_path: Path) -> None:
    ref, split = release_patient.write(tmp_path)
    import_mimic_directory(root=ref)
    import_mimic_directory(root=split)


def _context(bounds: str = "release") -> ToolContext:
    return ToolContext(
        current_date=release_patient.CURRENT_DATE,
        subject_id=release_patient.SUBJECT,
        hadm_id=release_patient.CURRENT,
        session_id="physassistbench_med_safety_contract_0",
        bounds=bounds,
    )


def _compare(call: dict, *, bounds: str = "release", stored: dict | None = None):
    fresh = execute_tool(name=call["tool"], arguments=call["arguments"], context=_context(bounds))
    return compare_canonical(stored=canonical(stored or call["observation"]), fresh=canonical(fresh))


@pytest.mark.parametrize("n", range(len(GOLD)), ids=[f"{c['tool']}-{i}" for i, c in enumerate(GOLD)])
def test_each_tool_reproduces_the_release_on_facts(patient, n):
    call = GOLD[n]
    found = _compare(call)
    assert found.differences == []
    # ids and reference spellings are representation, never a difference
    assert set(found.representation) <= {"id scheme"} | {r for r in found.representation if " only " in r}


def test_a_changed_value_or_status_is_still_a_difference(patient):
    labs = copy.deepcopy(GOLD[4]["observation"])
    labs["entry"][0]["resource"]["valueQuantity"]["value"] = 1.4
    diffs = _compare(GOLD[4], stored=labs).differences
    assert [(d.kind, d.fact, d.stored, d.now) for d in diffs] == [("changed", "value", "1.4 mg/dL", "1.3 mg/dL")]
    orders = copy.deepcopy(GOLD[6]["observation"])
    orders["entry"][0]["resource"]["status"] = "active"
    assert [(d.fact, d.stored, d.now) for d in _compare(GOLD[6], stored=orders).differences] == [
        ("status", "active", "completed")
    ]


def test_medication_request_status_follows_the_release_rule_only_under_release_bounds(patient):
    args = {"subject_id": release_patient.SUBJECT, "medication": "Apixaban"}
    release = execute_tool(name="MedicationRequest.search", arguments=args, context=_context("release"))
    strict = execute_tool(name="MedicationRequest.search", arguments=args, context=_context("strict"))
    rel, st = release["entry"][0]["resource"], strict["entry"][0]["resource"]
    assert rel["status"] == "completed" and rel["dispenseRequest"]["validityPeriod"]["end"] == "2190-03-16 11:00:00"
    assert st["status"] == "active" and "end" not in st["dispenseRequest"]["validityPeriod"]
    furosemide = {"subject_id": release_patient.SUBJECT, "medication": "furosemide", "status": "active"}
    active = execute_tool(name="MedicationRequest.search", arguments=furosemide, context=_context("release"))
    assert [
        e["resource"]["dosageInstruction"][0]["doseAndRate"][0]["doseQuantity"]["value"] for e in active["entry"]
    ] == [20]


def _import(tmp_path: Path) -> Session:
    path = release_contract_record.write_jsonl(tmp_path / "contract.jsonl")
    call_command("import_pab", str(path), "--quiet")
    return Session.objects.get(record_id="med_safety_contract_0")


def test_the_record_audits_clean_under_release_bounds(patient, tmp_path):
    session = _import(tmp_path)
    report = audit_sessions(sessions=[session], bounds="release")
    totals = report.totals
    assert (totals["calls"], totals["reproduced"], totals["differs"], totals["leaks"]) == (10, 10, 0, 0)
    findings = [f for s in report.sessions for t in s.turns for f in t.findings]
    known = {f["number"]: f["entry"] for f in findings if f["kind"] == "knowledge"}
    # the label's thresholds and the score's points are traced to the knowledge table, not the record
    assert known["60 kg"] == known["80"] == "apixaban_dosing"
    assert known["2.5 mg"] == "apixaban_dosing"  # (1.5 mg/dL is also a charted creatinine: traced to the record)
    assert [f["number"] for f in findings if f["kind"] == "untraced"] == []
    premises = [f for f in findings if f["kind"] == "premise"]
    assert [(p["reason"], p["forms"]) for p in premises] == [
        ("dose_mismatch", ["request_explicit_en", "request_implicit_en", "request_explicit_zh", "request_implicit_zh"])
    ]


def test_strict_bounds_report_the_release_data_after_the_cutoff_as_leaks(patient, tmp_path):
    session = _import(tmp_path)
    report = audit_sessions(sessions=[session], bounds="strict")
    leaks = [c for s in report.sessions for t in s.turns for c in t.calls if c["status"] == "leak"]
    leaked = {x["value"][:10] for c in leaks for x in c["leaks"]}
    assert leaks and leaked <= {"2190-03-14", "2190-03-15", "2190-03-16"}
    assert {c["tool"] for c in leaks} >= {"Encounter.search", "MedicationRequest.search"}


def test_the_command_prints_reproduced_calls_and_knowledge(patient, tmp_path):
    session = _import(tmp_path)
    out = StringIO()
    call_command("audit_gold", "--sessions", session.record_id, "--bounds", "release", stdout=out)
    text = out.getvalue()
    assert "EHR calls 10/10 reproduced (100.0%), 0 differ, 7 with representation-only differences" in text
    assert "0 leak(s)" in text
    assert "traced to the knowledge table" in text and "~ turn 2: 60 kg is a published threshold" in text
    assert dt.date.fromisoformat(session.current_date.isoformat()) == release_patient.CURRENT_DATE
