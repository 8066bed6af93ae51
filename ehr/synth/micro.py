"""microbiologyevents: cultures drawn at admission, organisms and one row per antibiotic tested.

The organism is decided here first because the antibiotic orders (meds.py) and the discharge
note depend on it: therapy is narrowed to a drug the isolate is susceptible to.
"""

import datetime as dt
import random

from ehr.synth.diseases import DISEASES
from ehr.synth.microbes import ANTIBIOTICS, ORGANISMS, SPECIMENS
from ehr.synth.plan import Admission, Patient
from ehr.synth.sink import Sink

# Resistance patterns: antibiotic key -> probability of R (absent: always S).
RESISTANCE: dict[str, dict[str, float]] = {
    "ecoli": {"ampicillin": 0.6, "ampicillin_sulbactam": 0.4, "ciprofloxacin": 0.3, "trimethoprim_sulfa": 0.3},
    "klebsiella": {"ampicillin": 1.0, "nitrofurantoin": 0.5, "trimethoprim_sulfa": 0.2},
    "pseudomonas": {"ciprofloxacin": 0.25},
    "mrsa": {"oxacillin": 1.0, "erythromycin": 0.9, "levofloxacin": 0.7, "clindamycin": 0.4},
    "strep_pneumo": {"erythromycin": 0.4},
}
# Isolates never reported resistant to the drug the disease plan narrows to (keeps therapy coherent).
KEEP_SUSCEPTIBLE = {
    "cefazolin",
    "ceftriaxone",
    "vancomycin",
    "tetracycline",
    "trimethoprim_sulfa",
    "piperacillin_tazobactam",
    "levofloxacin",
}


def choose_organism(*, rng: random.Random, adm: Admission) -> str | None:
    """The admission's pathogen (or None): every positive culture of the admission grows it."""
    disease = DISEASES[adm.disease]
    candidates: list[str] = []
    for _specimen, alternatives in disease.cultures:
        for org in alternatives:
            if org is not None and org not in candidates:
                candidates.append(org)
    if not candidates:
        return None
    if adm.disease == "sepsis_pna":
        # MRSA dominates so that vancomycin therapy (and its trough monitoring) is common.
        return rng.choices(candidates, weights=[5, 3, 2][: len(candidates)])[0]
    return rng.choice(candidates)


def _susceptibility(*, rng: random.Random, organism: str, antibiotic: str) -> tuple[str, str, float]:
    """(interpretation, dilution comparison, MIC value) for one organism/antibiotic pair."""
    ab = ANTIBIOTICS[antibiotic]
    p_r = RESISTANCE[organism].get(antibiotic, 0.0)
    # MRSA is never discharged on levofloxacin, so its common fluoroquinolone resistance may show.
    if antibiotic in KEEP_SUSCEPTIBLE and not (organism == "mrsa" and antibiotic == "levofloxacin"):
        p_r = 0.0
    if rng.random() < p_r:
        return "R", "=>", ab.r_mic
    if rng.random() < 0.08 and p_r > 0:
        return "I", "=", ab.s_mic * 4
    return "S", "<=", ab.s_mic


def _fmt_mic(*, value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def cultures(
    *, sink: Sink, rng: random.Random, patient: Patient, adm: Admission, organism: str | None, outpatient: bool
) -> None:
    """Write the admission's cultures; ``outpatient`` adds a clinic urine culture with no hadm_id."""
    disease = DISEASES[adm.disease]
    provider = f"P{rng.randint(10000, 99999)}"
    for n, (spec_key, alternatives) in enumerate(disease.cultures):
        grows = organism if organism in alternatives else None
        if grows is not None and None in alternatives and n > 0 and rng.random() < 0.3:
            grows = None  # one blood set of two stays negative: common and realistic
        collected = adm.admittime + dt.timedelta(minutes=rng.randint(15, 120) + 7 * n)
        _specimen(
            sink=sink,
            rng=rng,
            patient=patient,
            hadm_id=adm.hadm_id,
            spec_key=spec_key,
            organism=grows,
            collected=collected,
            provider=provider,
        )
    if outpatient:
        collected = (adm.admittime - dt.timedelta(days=rng.randint(20, 50))).replace(hour=rng.randint(9, 15))
        _specimen(
            sink=sink,
            rng=rng,
            patient=patient,
            hadm_id=None,
            spec_key="urine",
            organism=None,
            collected=collected,
            provider=provider,
        )


def _specimen(
    *,
    sink: Sink,
    rng: random.Random,
    patient: Patient,
    hadm_id: int | None,
    spec_key: str,
    organism: str | None,
    collected: dt.datetime,
    provider: str,
) -> None:
    spec = SPECIMENS[spec_key]
    specimen_id = sink.next_id("micro_specimen", 5_000_000)
    final = collected + dt.timedelta(days=2 if spec_key != "blood" else 3, hours=rng.randint(1, 9))
    common = {
        "subject_id": patient.subject_id,
        "hadm_id": hadm_id,
        "micro_specimen_id": specimen_id,
        "order_provider_id": provider,
        "chartdate": dt.datetime.combine(collected.date(), dt.time()),
        "charttime": collected,
        "spec_itemid": spec.spec_itemid,
        "spec_type_desc": spec.spec_type_desc,
        "test_seq": 1,
        "storedate": dt.datetime.combine(final.date(), dt.time()),
        "storetime": final,
        "test_itemid": spec.test_itemid,
        "test_name": spec.test_name,
    }
    if organism is None:
        comment = "No MRSA isolated." if spec_key == "mrsa_screen" else "NO GROWTH."
        if spec_key == "urine" and hadm_id is None:
            comment = "<10,000 CFU/mL."
        sink.add(
            "microbiologyevents",
            microevent_id=sink.next_id("microevent", 1),
            **common,
            org_itemid=None,
            org_name=None,
            isolate_num=None,
            quantity=None,
            ab_itemid=None,
            ab_name=None,
            dilution_text=None,
            dilution_comparison=None,
            dilution_value=None,
            interpretation=None,
            comments=comment,
        )
        return
    org = ORGANISMS[organism]
    quantity = {"urine": ">100,000 CFU/mL", "sputum": "MODERATE GROWTH", "wound": "SPARSE GROWTH"}.get(spec_key)
    for ab_key in org.panel:
        interp, comparison, value = _susceptibility(rng=rng, organism=organism, antibiotic=ab_key)
        ab = ANTIBIOTICS[ab_key]
        text = f"{comparison}{_fmt_mic(value=value)}" if comparison != "=" else _fmt_mic(value=value)
        sink.add(
            "microbiologyevents",
            microevent_id=sink.next_id("microevent", 1),
            **common,
            org_itemid=org.itemid,
            org_name=org.name,
            isolate_num=1,
            quantity=quantity,
            ab_itemid=ab.itemid,
            ab_name=ab.name,
            dilution_text=text,
            dilution_comparison=comparison,
            dilution_value=float(value),
            interpretation=interp,
            comments=None,
        )
