"""prescriptions and emar: the admission's orders and every scheduled administration.

Orders = home medications continued (minus those the illness holds) + the disease's orders,
adjusted to the patient's anticoagulant and to the culture result. The resulting plan is kept in
``adm.facts`` so the discharge note lists exactly these drugs.
"""

import datetime as dt
import random

from ehr.synth.diseases import DISEASES, Order
from ehr.synth.drugs import DRUGS
from ehr.synth.plan import Admission, Patient
from ehr.synth.sink import Sink

# Administration clock times by doses per day (insulin: before meals and at bedtime).
SCHEDULE: dict[float, tuple[int, ...]] = {
    1: (9,),
    2: (9, 21),
    3: (6, 14, 22),
    4: (6, 12, 18, 23),
    6: (2, 6, 10, 14, 18, 22),
}
INSULIN_SCHEDULE = (7, 11, 16, 21)


def plan_orders(*, patient: Patient, adm: Admission) -> tuple[list[Order], list[str], list[str]]:
    """(inpatient orders, discharge additions, discharge stops) for this admission."""
    disease = DISEASES[adm.disease]
    orders = list(disease.orders)
    add = list(disease.discharge_add)
    stop = list(disease.discharge_stop)
    organism = adm.facts.get("organism")
    if adm.disease == "afib_rvr" and patient.anticoagulant == "apixaban":
        orders = [Order("apixaban") if o.drug == "warfarin" else o for o in orders if o.drug != "heparin"]
        add = [d for d in add if d != "warfarin"]
    if adm.disease == "sepsis_pna":
        if organism == "mrsa":
            orders = [
                Order("vancomycin"),
                Order("pip_tazo", 0, 2),
                Order("ns", 0, 2),
                Order("heparin_sc"),
                Order("acetaminophen", prn=True),
            ]
            add.append("linezolid")
        else:
            # MRSA ruled out by day 2: vancomycin stopped, therapy narrowed.
            narrowed = "pip_tazo" if organism == "pseudomonas" else "ceftriaxone"
            orders = [
                Order("vancomycin", 0, 2),
                Order("pip_tazo", 0, 3),
                Order(narrowed, 3),
                Order("ns", 0, 2),
                Order("heparin_sc"),
                Order("acetaminophen", prn=True),
            ]
            add.append("levofloxacin")
    diabetic = "t1dm" in patient.conditions or "t2dm" in patient.conditions
    if diabetic and not any(o.drug == "insulin" for o in orders):
        orders.append(Order("insulin"))  # sliding scale for every inpatient diabetic
    if any(o.drug in ("heparin", "enoxaparin") for o in orders) or patient.anticoagulant:
        orders = [o for o in orders if o.drug != "heparin_sc"]  # no prophylaxis on top of anticoagulation
    ordered = {o.drug for o in orders}
    names = {DRUGS[d].name for d in ordered}
    held = set(disease.hold)
    if adm.disease in ("afib_rvr", "pe", "nstemi") and patient.anticoagulant:
        held.add(patient.anticoagulant)  # replaced by the inpatient anticoagulation plan
    home = [
        Order(drug, 0)
        for drug in patient.home_meds
        if drug not in held and drug not in ordered and DRUGS[drug].name not in names
    ]
    return home + orders, add, stop


def _times(*, drug: str, start: dt.datetime, stop: dt.datetime) -> list[dt.datetime]:
    d = DRUGS[drug]
    hours = INSULIN_SCHEDULE if d.klass == "insulin" and d.per_day == 4 else SCHEDULE.get(d.per_day, ())
    times: list[dt.datetime] = []
    day = start.date()
    while day <= stop.date():
        for hour in hours:
            when = dt.datetime.combine(day, dt.time(hour % 24))
            if start <= when <= stop:
                times.append(when)
        day += dt.timedelta(days=1)
    return times


def prescriptions(*, sink: Sink, rng: random.Random, patient: Patient, adm: Admission) -> None:
    orders, add, stop = plan_orders(patient=patient, adm=adm)
    adm.facts["orders"] = orders
    adm.facts["discharge_add"] = add
    adm.facts["discharge_stop"] = stop
    vanc_days: set[int] = set()
    provider = f"P{rng.randint(10000, 99999)}"
    for order in orders:
        d = DRUGS[order.drug]
        start = adm.admittime + dt.timedelta(days=order.start, minutes=rng.randint(40, 180))
        if order.start:
            start = dt.datetime.combine(
                adm.admittime.date() + dt.timedelta(days=order.start), dt.time(8, rng.randint(0, 59))
            )
        stop = adm.dischtime if order.days is None else min(start + dt.timedelta(days=order.days), adm.dischtime)
        if start >= stop:
            continue
        poe_seq = sink.next_id(f"poe{patient.subject_id}", 1)
        poe_id = f"{patient.subject_id}-{poe_seq}"
        pharmacy_id = sink.next_id("pharmacy", 1_000_000)
        dose = d.dose
        if order.drug == "insulin":
            dose = "0-12"  # sliding scale: dose depends on the fingerstick
        sink.add(
            "prescriptions",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            pharmacy_id=pharmacy_id,
            poe_id=poe_id,
            poe_seq=poe_seq,
            order_provider_id=provider,
            starttime=start,
            stoptime=stop,
            drug_type="MAIN",
            drug=d.name,
            formulary_drug_cd=d.code,
            gsn=d.gsn,
            ndc=d.ndc,
            prod_strength=d.strength,
            form_rx=d.form,
            dose_val_rx=dose,
            dose_unit_rx=d.unit,
            form_val_disp=d.disp,
            form_unit_disp=d.disp_unit,
            doses_per_24_hrs=None if order.prn else float(d.per_day),
            route=d.route,
        )
        if order.drug == "vancomycin":
            first = (start.date() - adm.admittime.date()).days
            last = (stop.date() - adm.admittime.date()).days
            vanc_days.update(range(max(first + 1, 1), last + 1))
        _emar(
            sink=sink,
            rng=rng,
            patient=patient,
            adm=adm,
            order=order,
            start=start,
            stop=stop,
            poe_id=poe_id,
            pharmacy_id=pharmacy_id,
        )
    adm.facts["vanc_days"] = vanc_days


def _emar(
    *,
    sink: Sink,
    rng: random.Random,
    patient: Patient,
    adm: Admission,
    order: Order,
    start: dt.datetime,
    stop: dt.datetime,
    poe_id: str,
    pharmacy_id: int,
) -> None:
    d = DRUGS[order.drug]
    provider = f"P{rng.randint(10000, 99999)}"
    if order.prn:
        span = (stop - start).total_seconds()
        times = sorted(start + dt.timedelta(seconds=rng.uniform(0, span)) for _ in range(rng.randint(1, 3)))
        times = [t.replace(second=0, microsecond=0) for t in times]
    elif d.per_day >= 24:
        times = [start, stop - dt.timedelta(minutes=5)]  # infusion: started, then stopped
    else:
        times = _times(drug=order.drug, start=start, stop=stop)
    poor_adherence = "missing" in patient.adherence or "stopped" in patient.adherence
    for n, scheduled in enumerate(times):
        if d.per_day >= 24 and not order.prn:
            event = "Started" if n == 0 else "Stopped"
        elif d.klass == "insulin" and order.drug == "insulin" and rng.random() < 0.25:
            event = "Not Given"  # fingerstick below the sliding-scale threshold
        elif rng.random() < (0.08 if poor_adherence else 0.03):
            event = rng.choice(("Not Given", "Delayed Administered"))
        else:
            event = "Administered"
        chart = scheduled + dt.timedelta(minutes=rng.randint(-10, 45) if not order.prn else 0)
        chart = min(max(chart, adm.admittime + dt.timedelta(minutes=1)), adm.dischtime - dt.timedelta(minutes=1))
        seq = sink.next_id(f"emar{patient.subject_id}", 1)
        sink.add(
            "emar",
            subject_id=patient.subject_id,
            hadm_id=adm.hadm_id,
            emar_id=f"{patient.subject_id}-{seq}",
            emar_seq=seq,
            poe_id=poe_id,
            pharmacy_id=pharmacy_id,
            enter_provider_id=provider,
            charttime=chart,
            medication=d.name,
            event_txt=event,
            scheduletime=None if order.prn else scheduled,
            storetime=chart + dt.timedelta(minutes=rng.randint(0, 6)),
        )
