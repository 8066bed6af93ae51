"""runeval on gold stored with an earlier version's FHIR-style names: oracle, replay, diagnostics, judge unchanged.

An old snapshot (frozen before the release's contract) keeps ``patient``/``encounter``, ``code`` for a
drug, ``symptom``/``medication`` for patient questions, an order's ``status: on-hold`` and write checks
on those names. Everything that compares calls reads them in the contract's terms, so the oracle still
scores as on contract gold and nothing it calls is dropped.
"""

import json

from django.core.management import call_command

from ehr.fhir import REGISTRY
from scenarios.models import GoldStep, RubricItem

# contract name → the earlier version's name, per tool (and for every tool)
OLD_NAMES = {"subject_id": "patient", "hadm_id": "encounter"}
OLD_PER_TOOL = {
    "MedicationRequest.search": {"medication": "code"},
    "MedicationAdministration.search": {"medication": "code"},
    "DiagnosticReport.search": {"report_type": "code"},
    "DocumentReference.search": {"type_code": "type", "keyword": "section"},
    "patient.get_symptom_history": {"query": "symptom"},
    "patient.get_medication_adherence": {"drug": "medication"},
    "MedicationRequest.create": {"indication": "reason"},
    "ServiceRequest.create": {"service_type": "code", "target_date": "occurrence_date"},
    "Flag.create": {"detail": "note"},
}


def _old(tool: str, arguments: dict) -> dict:
    names = {**OLD_NAMES, **OLD_PER_TOOL.get(tool, {})}
    out = {names.get(k, k): v for k, v in arguments.items()}
    if out.get("type") == "discharge-summary":
        out["type"] = "discharge"
    if tool == "MedicationRequest.create" and out.get("dose") == "hold":
        del out["dose"]
        out["status"] = "on-hold"
    return out


def _make_old(sessions) -> int:
    changed = 0
    for step in GoldStep.objects.filter(turn__session__in=sessions):
        old = _old(step.tool, step.arguments or {})
        if old != step.arguments:
            step.arguments = old
            step.save(update_fields=["arguments"])
            changed += 1
    for item in RubricItem.objects.filter(turn__session__in=sessions).exclude(machine_check=None):
        check = item.machine_check
        if check.get("kind") == "write_call":
            item.machine_check = {**check, "params": _old(check["tool"], check["params"])}
            item.save(update_fields=["machine_check"])
    return changed


def _run(tmp_path, name):
    out = tmp_path / name
    call_command(
        "runeval", "--model", "rules:oracle", "--judge", "rules", "--sessions", "all", "--quiet", "--output", str(out)
    )
    summary = json.loads((out / "summary.json").read_text())
    return summary, [json.loads(line)["trace"] for line in (out / "turns.jsonl").read_text().splitlines()]


def test_oracle_on_gold_of_an_earlier_version_scores_as_on_contract_gold(sessions, tmp_path):
    contract, _ = _run(tmp_path, "contract")
    assert _make_old(sessions) > 0
    summary, traces = _run(tmp_path, "old")
    assert summary["metrics"]["en"]["mRS"]["all"] == contract["metrics"]["en"]["mRS"]["all"] >= 0.98
    assert summary["errors"]["unknown_arguments"] == 0 and summary["errors"]["invalid_calls"] == 0
    assert summary["errors"]["replay_misses"] == 0
    for trace in traces:
        assert trace["diagnostics"] == {
            "missing_calls": [],
            "extra_calls": [],
            "argument_mismatches": [],
            "dropped_arguments": [],
        }
        # The oracle called with the contract's names, as a model reading the schemas would.
        for call in trace["calls"]:
            known = {p.name for p in REGISTRY[call["name"]].params}
            assert set(call["arguments"]) <= known, call
