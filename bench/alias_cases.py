"""The per-tool part of ``bench/tool_latency.py --per-tool``: what the argument alias layer adds to a call.

Every tool is called twice per sample, alternating which goes first: once with the contract's argument
names and once written the way older clients or sloppy models write it (alias names, old enum values,
placeholders for optional parameters). Before timing, both forms must clean to the same arguments
and neither may produce a warning, so the two timings are of the same call. The patient tools get a
constant responder (the answer does not matter here: the layer in front of it does).
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import statistics
import time
from pathlib import Path
from typing import Any

ALIAS_DB = "physreview_bench_alias"
TARGET_MS = 0.05
DEMO_COHORT = Path(__file__).resolve().parent.parent / "ehr" / "data" / "demo_cohort"
SESSION_ID = "bench_alias_session"


def _setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from ehr.models import Patient

    call_command("migrate", verbosity=0)
    if not Patient.objects.exists():
        print(f"importing the demo cohort into {ALIAS_DB}")
        call_command("import_mimic", str(DEMO_COHORT), "--quiet")


def _record() -> dict[str, Any]:
    """The demo admission with the most lab results that also has orders, diagnoses and a discharge note."""
    from django.db.models import Count

    from ehr.models import Admission, DiagnosisIcd, DischargeNote, LabEvent, Prescription

    with_notes = set(DischargeNote.objects.values_list("hadm_id", flat=True))
    with_orders = set(Prescription.objects.values_list("hadm_id", flat=True))
    ranked = LabEvent.objects.exclude(hadm_id=None).values("hadm_id").annotate(n=Count("pk")).order_by("-n", "hadm_id")
    hadm = next(r["hadm_id"] for r in ranked if r["hadm_id"] in with_notes and r["hadm_id"] in with_orders)
    admission = Admission.objects.get(hadm_id=hadm)
    drug = Prescription.objects.filter(hadm_id=hadm).order_by("starttime", "pk").values_list("drug", flat=True)[0]
    icd = DiagnosisIcd.objects.filter(hadm_id=hadm).order_by("seq_num").values_list("icd_code", flat=True)[0]
    label = (
        LabEvent.objects.filter(hadm_id=hadm)
        .values("itemid")
        .annotate(n=Count("pk"))
        .order_by("-n", "itemid")
        .values_list("itemid", flat=True)[0]
    )
    from ehr.models import DLabItem

    return {
        "subject": admission.subject_id,
        "hadm": hadm,
        # the day after discharge: the whole stay is visible, so every search has something to return
        "current_date": (admission.dischtime or admission.admittime).date() + dt.timedelta(days=1),
        "drug": drug.split()[0].lower(),
        "icd": icd[:3],
        "lab": DLabItem.objects.get(itemid=label).label.lower(),
    }


def cases(r: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(tool, contract arguments, the same call with alias names and placeholders)`` for every tool."""
    s, h = r["subject"], r["hadm"]
    ids, old = {"subject_id": s, "hadm_id": h}, {"patient": s, "encounter": h}
    return [
        ("Patient.read", {"subject_id": s}, {"patient": s}),
        ("Encounter.search", ids, {**old}),
        ("Condition.search", {**ids, "code": r["icd"]}, {**old, "icd_code": r["icd"], "clinical_status": ""}),
        (
            "Observation.search",
            {**ids, "category": "laboratory", "code": r["lab"], "_count": 10},
            {**old, "type": "lab", "test_name": r["lab"], "limit": 10, "date_from": "", "date_to": " "},
        ),
        ("MedicationRequest.search", {**ids, "medication": r["drug"]}, {**old, "drug": r["drug"], "status": ""}),
        ("MedicationAdministration.search", {**ids, "medication": r["drug"]}, {**old, "med": r["drug"]}),
        ("DiagnosticReport.search", {**ids, "report_type": "chest"}, {**old, "type": "chest"}),
        (
            "DocumentReference.search",
            {**ids, "type_code": "discharge-summary", "keyword": "Discharge Medications"},
            {**old, "type": "discharge", "section": "Discharge Medications"},
        ),
        ("CarePlan.search", {**ids, "category": "followup"}, {**old, "type": "follow-up"}),
        ("Procedure.search", ids, {"patient": s, "encounter": h}),
        ("AllergyIntolerance.search", ids, {"patient_id": s, "encounter": h}),
        ("patient.get_symptom_history", {"query": "chest pain"}, {"patient": s, "symptom": "chest pain"}),
        ("patient.get_medication_adherence", {"drug": r["drug"]}, {"patient": s, "medication": r["drug"]}),
        ("patient.get_social_history", {}, {"patient": s}),
        ("patient.get_functional_status", {}, {"patient": s}),
        ("patient.get_pain_assessment", {}, {"patient": s}),
        (
            "MedicationRequest.create",
            {"subject_id": s, "medication": r["drug"], "dose": "2.5 mg", "route": "PO", "frequency": "BID"},
            {"patient": s, "drug": r["drug"], "dose": "2.5 mg", "route": "PO", "frequency": "BID", "duration_days": 0},
        ),
        (
            "ServiceRequest.create",
            {"subject_id": s, "service_type": "basic metabolic panel", "priority": "asap", "note": "recheck"},
            {"patient": s, "code": "basic metabolic panel", "priority": "stat", "reason": "recheck", "target_date": ""},
        ),
        (
            "Flag.create",
            {"subject_id": s, "category": "safety", "code": "bleeding risk", "detail": "INR high on warfarin"},
            {"patient": s, "category": "drug", "code": "bleeding risk", "note": "INR high on warfarin"},
        ),
        ("prepare_to_answer", {}, {"answer_type": ""}),
    ]


def _p50(values: list[float]) -> float:
    return statistics.median(values)


def _raw(tool: str, arguments: dict[str, Any], context: Any) -> dict[str, Any]:
    """What execute_tool hands to clean_arguments: patient tools get the session's ids, whatever was passed."""
    from ehr.fhir import REGISTRY
    from ehr.fhir.execute import PATIENT_SCOPE_NAMES

    if REGISTRY[tool].kind != "patient":
        return dict(arguments)
    raw = {k: v for k, v in arguments.items() if k not in PATIENT_SCOPE_NAMES}
    return {**raw, "subject_id": context.subject_id, "session_id": context.session_id}


def _time(fn, *args: Any, **kwargs: Any) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1000


def run_per_tool(*, url: str, calls: int, warmup: int) -> None:
    _setup(url)
    from ehr.fhir import REGISTRY, ToolContext, execute_tool, register_patient_responder
    from ehr.fhir.params import clean_arguments

    register_patient_responder(
        lambda *, tool, arguments, context: {"resourceType": "PatientAnswer", "tool": tool, "answer": "fine"}
    )
    record = _record()
    context = ToolContext(
        current_date=record["current_date"], subject_id=record["subject"], hadm_id=record["hadm"], session_id=SESSION_ID
    )
    print(
        f"demo admission {record['hadm']} (subject {record['subject']}), current date {record['current_date']}; "
        f"{calls} calls per form after {warmup} warm-up, forms alternating"
    )
    header = f"{'tool':34}{'contract':>10}{'alias':>10}{'Δ p50':>9}{'paired Δ':>10}{'A/A Δ':>9}{'clean Δ':>9}"
    print(
        "\nms per call through execute_tool: p50 of each form and their difference; 'paired Δ': median of the\n"
        "back-to-back differences (load drift cancels); 'A/A Δ': the p50 difference between two halves of the\n"
        f"contract calls (the noise floor); 'clean Δ': the p50 difference inside clean_arguments alone\n{header}"
    )
    worst, worst_paired, worst_clean = 0.0, 0.0, 0.0
    for tool, contract, alias in cases(record):
        assert tool in REGISTRY, tool
        spec, filled = REGISTRY[tool], {"subject_id": context.subject_id}
        raw = {"contract": _raw(tool, contract, context), "alias": _raw(tool, alias, context)}
        a, b = (clean_arguments(tool=spec, arguments=raw[f], filled=filled) for f in ("contract", "alias"))
        assert a.args == b.args and not a.warnings and not b.warnings, (tool, a, b)  # the same call, nothing dropped
        first = execute_tool(name=tool, arguments=contract, context=context)
        second = execute_tool(name=tool, arguments=alias, context=context)
        assert "error" not in first and "warnings" not in second, (tool, first, second)
        times: dict[str, list[float]] = {"contract": [], "alias": [], "clean contract": [], "clean alias": []}
        paired: list[float] = []
        forms = {"contract": contract, "alias": alias}
        gc.collect()
        gc.disable()  # a collection inside one form's call would land on that form only
        for i in range(warmup + calls):
            pair = {}
            for form in ("contract", "alias") if i % 2 == 0 else ("alias", "contract"):
                pair[form] = _time(execute_tool, name=tool, arguments=forms[form], context=context)
                clean_ms = _time(clean_arguments, tool=spec, arguments=raw[form], filled=filled)
                if i >= warmup:
                    times[form].append(pair[form])
                    times[f"clean {form}"].append(clean_ms)
            if i >= warmup:
                paired.append(pair["alias"] - pair["contract"])
        gc.enable()
        delta = _p50(times["alias"]) - _p50(times["contract"])
        # The same comparison between two halves of the contract calls: how far p50s differ by noise alone.
        noise = _p50(times["contract"][0::2]) - _p50(times["contract"][1::2])
        clean_delta = _p50(times["clean alias"]) - _p50(times["clean contract"])
        worst, worst_clean = max(worst, delta), max(worst_clean, clean_delta)
        worst_paired = max(worst_paired, _p50(paired))
        print(
            f"{tool:34}{_p50(times['contract']):10.3f}{_p50(times['alias']):10.3f}{delta:+9.4f}{_p50(paired):+10.4f}"
            f"{noise:+9.4f}{clean_delta:+9.4f}"
        )
    print(
        f"\nlargest added per call: Δ p50 {worst:+.4f} ms, paired Δ {worst_paired:+.4f} ms, inside clean_arguments "
        f"{worst_clean:+.4f} ms (target ≤ {TARGET_MS} ms)"
    )
    print(
        f"target on the paired difference: {'met' if worst_paired <= TARGET_MS else 'NOT met'}; on the difference of "
        f"p50s: {'met' if worst <= TARGET_MS else 'NOT met (compare with the A/A noise floor)'}"
    )
