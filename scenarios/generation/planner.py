"""Session planner: admission + current date + focus + task-type arc + subtypes + plan text.

Deterministic: one ``random.Random`` seeded from (seed, scenario, tier, index, attempt) makes every
choice, over candidates enumerated from the record in a stable order.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from dataclasses import dataclass, replace

from ehr.fhir import ToolContext, execute_tool
from scenarios.generation import knowledge as kb
from scenarios.generation.facts import AdmissionFacts, load_admission_facts
from scenarios.generation.lang import lab_name
from scenarios.generation.types import SCENARIOS, TIERS, Focus, SessionPlan, TurnPlan

TIER_FEATURES = {1: ("foundational",), 2: ("trend", "formula", "threshold"), 3: ("interaction", "sequential")}
FEATURE_CR = {
    "foundational": "cr_ref_range",
    "trend": "cr_trend",
    "formula": "cr_crcl",
    "threshold": "cr_threshold",
    "interaction": "cr_interaction",
    "sequential": "cr_renal_dosing",
}
# kind → (task type, tool source, workup mode, tool hint)
KINDS: dict[str, tuple[str, str, str | None, str]] = {
    "il_diagnoses": ("IL", "ehr", None, "Condition.search"),
    "il_med_order": ("IL", "ehr", None, "MedicationRequest.search"),
    "il_lab_latest": ("IL", "ehr", None, "Observation.search"),
    "il_discharge_meds": ("IL", "ehr", None, "DocumentReference.search"),
    "il_followup": ("IL", "ehr", None, "CarePlan.search"),
    "dg_lab_panel": ("DG", "ehr", "parallel", "Observation.search ×3"),
    "dg_drug_then_lab": ("DG", "ehr", "adaptive", "MedicationRequest.search → Observation.search"),
    "dg_adherence": ("DG", "mixed", "parallel", "MedicationRequest.search + patient.get_medication_adherence"),
    "dg_patient_history": ("DG", "patient", "parallel", "patient.get_symptom_history + patient.get_social_history"),
    "dg_discharge_review": ("DG", "ehr", "parallel", "DocumentReference.search + CarePlan.search"),
    "cr_ref_range": ("CR", "ehr", None, "Observation.search + reference range"),
    "cr_trend": ("CR", "ehr", None, "Observation.search (series) + trend"),
    "cr_threshold": ("CR", "ehr", None, "Observation.search + drug threshold"),
    "cr_crcl": ("CR", "ehr", None, "Patient.read + Observation.search (weight, creatinine) + Cockcroft-Gault"),
    "cr_interaction": ("CR", "ehr", None, "MedicationRequest.search ×2 + Condition.search + Observation.search"),
    "cr_renal_dosing": ("CR", "ehr", None, "Patient.read → Observation.search → MedicationRequest.search"),
    "wu_hold_drug": ("WU", "write", None, "MedicationRequest.create"),
    "wu_order_lab": ("WU", "write", None, "ServiceRequest.create"),
    "wu_flag": ("WU", "write", None, "Flag.create"),
}
# Arc templates per scenario; "CR*" is the tier's reasoning turn, "WU*" the write chosen from the record.
TEMPLATES: dict[str, tuple[tuple[str, ...], ...]] = {
    "diagnostic_workup": (
        ("il_diagnoses", "il_lab_latest", "dg_patient_history", "CR*"),
        ("il_diagnoses", "dg_lab_panel", "CR*", "WU*"),
    ),
    "med_safety": (
        ("il_med_order", "il_lab_latest", "CR*", "WU*"),
        ("il_med_order", "dg_adherence", "CR*", "WU*"),
    ),
    "treatment_response": (
        ("il_med_order", "dg_drug_then_lab", "CR*", "WU*"),
        ("il_med_order", "il_lab_latest", "CR*", "dg_adherence"),
    ),
    "discharge_planning": (
        ("il_discharge_meds", "il_followup", "CR*", "WU*"),
        ("il_discharge_meds", "dg_discharge_review", "CR*", "WU*"),
    ),
}
# The task-type arcs in use; ``sequence_idx`` is the position of a session's arc here.
ARCS: tuple[tuple[str, ...], ...] = (
    ("IL", "IL", "DG", "CR"),
    ("IL", "DG", "CR", "WU"),
    ("IL", "IL", "CR", "WU"),
    ("IL", "IL", "CR", "DG"),
)
DOMAINS = {
    "diagnostic_workup": "DxWorkup",
    "med_safety": "DrugLabMonitoring",
    "treatment_response": "TreatmentMonitoring",
    "discharge_planning": "DischargePlanning",
}
FEATURE_DOMAINS = {"formula": "RenalDosing", "sequential": "RenalDosing", "interaction": "DrugInteraction"}
# Turn kinds whose gold calls fetch the focus drug's order (MedicationRequest.search): a hold needs its
# route and frequency (required by MedicationRequest.create), so it follows one of them.
FETCHES_FOCUS_ORDER = frozenset({"il_med_order", "dg_drug_then_lab", "dg_adherence", "cr_threshold"})
_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Candidate:
    subject_id: int
    hadm_id: int
    current_date: dt.date
    feature: str
    focus: Focus
    lab_exceeded: bool  # the focus drug's lab crossed its threshold by the current date


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _days(f: AdmissionFacts, scenario: str) -> list[dt.date]:
    """Candidate current dates; a session sees only what was charted before its current date."""
    if scenario == "discharge_planning":
        # The day after discharge: the discharge note (charted on the discharge day, often at 00:00) and the
        # whole stay are visible then, and nothing later.
        noted = f.has_followup and f.discharge_note_date and f.discharge_note_date <= f.discharge
        return [f.discharge + _DAY] if noted else []
    return [f.admit + dt.timedelta(days=d) for d in range(1, (f.discharge - f.admit).days + 1)]


def _exceeded(rule: kb.DrugLab, values: list[float | None]) -> bool:
    last = next((v for v in reversed(values) if v is not None), None)
    if last is None:
        return False
    return last > rule.threshold if rule.direction == "high" else last < rule.threshold


def _base(f: AdmissionFacts, scenario: str, day: dt.date) -> tuple[Focus, kb.DrugLab | None] | None:
    """The scenario's focus on this day, or None if the admission does not fit the scenario then."""
    drugs = f.drugs_by(day=day)
    pairs = []
    for drug in drugs:
        rule = kb.drug_lab(drug=drug)
        if rule is None:
            continue
        since = f.drug_starts[drug] if scenario == "treatment_response" else None
        n = len(f.labs_by(label=rule.lab, day=day, since=since))
        if n >= (2 if scenario == "treatment_response" else 1):
            pairs.append((-n, drug, rule))
    pairs.sort(key=lambda p: (p[0], p[1]))
    if pairs:
        _, drug, rule = pairs[0]
        return Focus(diagnosis=f.principal_dx, lab=rule.lab, drug=drug), rule
    if scenario in ("med_safety", "treatment_response"):
        return None
    for lab in kb.WORKUP_LABS:
        if f.labs_by(label=lab, day=day):
            return Focus(diagnosis=f.principal_dx, lab=lab), None
    return None


def _features(f: AdmissionFacts, scenario: str, day: dt.date) -> list[Candidate]:
    base = _base(f, scenario, day)
    if base is None or not f.principal_dx:
        return []
    focus, rule = base
    drugs = f.drugs_by(day=day)
    since = f.drug_starts.get(focus.drug or "") if scenario == "treatment_response" else None
    values = f.labs_by(label=focus.lab, day=day, since=since)
    exceeded = rule is not None and _exceeded(rule, values)
    out: dict[str, Focus] = {"foundational": focus}
    if len(values) >= 2:
        out["trend"] = focus
    if rule is not None:
        out["threshold"] = focus
    has_weight = f.weight_by(day=day) and bool(f.labs_by(label="Creatinine", day=day))
    renal = next((d for d in drugs if kb.renal_rule(drug=d)), None)
    if has_weight:
        out["formula"] = replace(focus, renal_drug=renal)
        if renal is not None:
            out["sequential"] = replace(focus, renal_drug=renal)
    for inter in kb.INTERACTIONS:
        a = next((d for d in drugs if inter.drugs[0] in d.lower()), None)
        b = next((d for d in drugs if inter.drugs[1] in d.lower()), None)
        if a and b and f.labs_by(label=inter.lab, day=day):
            out["interaction"] = Focus(
                diagnosis=f.principal_dx, lab=inter.lab, drug=a, second_drug=b, interaction=inter.key
            )
            break
    return [
        Candidate(f.subject_id, f.hadm_id, day, feature, fc, exceeded and fc.drug == focus.drug)
        for feature, fc in out.items()
    ]


def enumerate_candidates(*, scenario: str, tier: int, facts: list[AdmissionFacts] | None = None) -> list[Candidate]:
    """Every (admission, current date, focus) fitting the scenario and the tier, in a stable order."""
    if scenario not in SCENARIOS or tier not in TIERS:
        raise ValueError(f"unknown scenario/tier {scenario!r}/{tier!r}")
    facts = load_admission_facts() if facts is None else facts
    wanted = TIER_FEATURES[tier]
    return [c for f in facts for day in _days(f, scenario) for c in _features(f, scenario, day) if c.feature in wanted]


def _wu_kind(c: Candidate, earlier: list[str]) -> str:
    if c.feature == "interaction":
        return "wu_flag"
    rule = kb.drug_lab(drug=c.focus.drug or "")
    if rule is not None and rule.holdable and c.lab_exceeded and FETCHES_FOCUS_ORDER & set(earlier):
        return "wu_hold_drug"
    return "wu_order_lab"


def _entity(kind: str, focus: Focus) -> str:
    if kind in (
        "il_med_order",
        "dg_drug_then_lab",
        "dg_adherence",
        "cr_threshold",
        "wu_hold_drug",
        "cr_interaction",
        "wu_flag",
    ):
        return focus.drug or focus.lab
    if kind == "cr_renal_dosing":
        return focus.renal_drug or "Creatinine"
    if kind == "cr_crcl":
        return "Creatinine"
    if kind == "il_diagnoses":
        return focus.diagnosis
    if kind in ("il_discharge_meds", "dg_discharge_review"):
        return "discharge medications"
    if kind == "il_followup":
        return "follow-up"
    if kind == "dg_patient_history":
        return "symptoms"
    return focus.lab


def _topic(kind: str, focus: Focus) -> str:
    lab, drug = lab_name(focus.lab), (focus.drug or "").lower()
    return {
        "il_diagnoses": "admission diagnoses",
        "il_med_order": f"current {drug} order",
        "il_lab_latest": f"latest {lab}",
        "il_discharge_meds": "discharge medication list",
        "il_followup": "follow-up appointments",
        "dg_lab_panel": f"{lab} with related labs",
        "dg_drug_then_lab": f"{lab} since {drug} was started",
        "dg_adherence": f"{drug} order and home adherence",
        "dg_patient_history": "symptom and social history from the patient",
        "dg_discharge_review": "discharge medications and follow-up plan",
        "cr_ref_range": f"interpret latest {lab} against its reference range",
        "cr_trend": f"{lab} trend and its meaning",
        "cr_threshold": f"{lab} against the {drug} safety threshold",
        "cr_crcl": "Cockcroft-Gault creatinine clearance",
        "cr_interaction": f"{drug} + {(focus.second_drug or '').lower()} interaction",
        "cr_renal_dosing": f"renal dosing of {(focus.renal_drug or '').lower()}",
        "wu_hold_drug": f"hold {drug}",
        "wu_order_lab": f"order a repeat {lab}",
        "wu_flag": "flag the interaction on the record",
    }[kind]


def _subtypes(rng: random.Random, kinds: list[str], focus: Focus) -> list[str | None]:
    """NA only when the turn's entity was established by an earlier turn; PE and AE always possible."""
    out: list[str | None] = [None]
    seen = {_entity(kinds[0], focus)}
    for kind in kinds[1:]:
        entity = _entity(kind, focus)
        options = ["PE", "AE"] + (["NA"] if entity in seen else [])
        out.append(rng.choice(sorted(options)))
        seen.add(entity)
    return out


def patient_age_sex(*, subject_id: int, current_date: dt.date) -> tuple[int, str]:
    """Age at the current date and sex letter, as Patient.read reports them (used in env_info)."""
    ctx = ToolContext(current_date=current_date, subject_id=subject_id)
    pat = execute_tool(name="Patient.read", arguments={"subject_id": subject_id}, context=ctx)
    age = next((e["valueInteger"] for e in pat.get("extension", []) if e["url"].endswith("age-at-current-date")), 0)
    return int(age), "F" if pat.get("gender") == "female" else "M"


def plan_session(
    *,
    scenario: str,
    tier: int,
    seed: int,
    index: int,
    candidates: list[Candidate] | None = None,
    attempt: int = 0,
) -> SessionPlan | None:
    """A plan for one session, or None when the record has no admission fitting scenario and tier."""
    if candidates is None:
        candidates = enumerate_candidates(scenario=scenario, tier=tier)
    if not candidates:
        return None
    rng = _rng(seed, scenario, tier, index, attempt)
    # Balance the tier's features first (some, like interactions, have far fewer candidate days),
    # then spread over admissions (index-driven), then let the rng pick the day.
    features = sorted({c.feature for c in candidates})
    feature = features[(rng.randrange(len(features)) + index) % len(features)]
    with_feature = [c for c in candidates if c.feature == feature]
    admissions = sorted({(c.subject_id, c.hadm_id) for c in with_feature})
    chosen_adm = admissions[(rng.randrange(len(admissions)) + index) % len(admissions)]
    pool = [c for c in with_feature if (c.subject_id, c.hadm_id) == chosen_adm]
    c = pool[rng.randrange(len(pool))]
    template = TEMPLATES[scenario][rng.randrange(len(TEMPLATES[scenario]))]
    kinds: list[str] = []
    for k in template:
        kinds.append(FEATURE_CR[c.feature] if k == "CR*" else _wu_kind(c, kinds) if k == "WU*" else k)
    arc = tuple(KINDS[k][0] for k in kinds)
    subtypes = _subtypes(rng, kinds, c.focus)
    turns = tuple(
        TurnPlan(
            turn=i,
            task_type=KINDS[k][0],
            kind=k,
            topic=_topic(k, c.focus),
            tool_hint=KINDS[k][3],
            tool_source=KINDS[k][1],
            subtype=subtypes[i],
            workup_mode=KINDS[k][2],
            entity=_entity(k, c.focus),
        )
        for i, k in enumerate(kinds)
    )
    age, sex = patient_age_sex(subject_id=c.subject_id, current_date=c.current_date)
    drug = f" on {c.focus.drug}" if c.focus.drug else ""
    return SessionPlan(
        scenario=scenario,
        tier=tier,
        seed=seed,
        index=index,
        attempt=attempt,
        subject_id=c.subject_id,
        hadm_id=c.hadm_id,
        current_date=c.current_date.isoformat(),
        clinical_task_domain=FEATURE_DOMAINS.get(c.feature, DOMAINS[scenario]),
        sequence_idx=ARCS.index(arc),
        tier_feature=c.feature,
        focus=c.focus,
        turns=turns,
        clinical_situation=(
            f"{age}-year-old {sex} admitted with {c.focus.diagnosis}{drug}; "
            f"{lab_name(c.focus.lab)} is followed. Current date {c.current_date.isoformat()}."
        ),
        investigation_arc=" → ".join(t.topic for t in turns),
    )
