"""Patient.read and Encounter.search (admissions with their transfers and services)."""

from __future__ import annotations

from typing import Any

from ehr import models as m
from ehr.fhir.common import bundle, concept, drop_none, ref, require_encounter, require_patient
from ehr.fhir.context import ToolContext, fmt_datetime

ENCOUNTER_COUNT = 20

_GENDER = {"M": "male", "F": "female"}


def age_at(*, patient: m.Patient, context: ToolContext) -> int:
    """MIMIC's shifted ages: anchor_age in anchor_year, so age moves with the session's year."""
    return patient.anchor_age + context.current_date.year - patient.anchor_year


def patient_read(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    patient = require_patient(subject_id=args["subject_id"])
    latest = (
        m.Admission.objects.filter(subject_id=patient.subject_id, admittime__lt=context.cutoff)
        .order_by("-admittime", "-hadm_id")
        .first()
    )
    out: dict[str, Any] = {
        "resourceType": "Patient",
        "id": str(patient.subject_id),
        "identifier": [{"system": "mimic-iv/subject_id", "value": str(patient.subject_id)}],
        "gender": _GENDER.get(patient.gender, "unknown"),
        # Year only: MIMIC keeps no birth date; this year reproduces the age formula below.
        "birthDate": str(patient.anchor_year - patient.anchor_age),
        "extension": [
            {"url": "mimic-iv/age-at-current-date", "valueInteger": age_at(patient=patient, context=context)}
        ],
    }
    if context.date_visible(patient.dod):
        out["deceasedDateTime"] = patient.dod.isoformat()
    else:
        out["deceasedBoolean"] = False
    if latest is not None:
        if latest.marital_status:
            out["maritalStatus"] = {"text": latest.marital_status}
        if latest.language:
            out["communication"] = [{"language": {"text": latest.language}}]
        if latest.race:
            out["extension"].append({"url": "mimic-iv/race", "valueString": latest.race})
        if latest.insurance:
            out["extension"].append({"url": "mimic-iv/insurance", "valueString": latest.insurance})
    return out


def _encounter_resource(adm: m.Admission, *, transfers: list, services: list, context: ToolContext) -> dict[str, Any]:
    discharged = context.time_visible(adm.dischtime)
    period = {"start": fmt_datetime(adm.admittime), "end": fmt_datetime(adm.dischtime) if discharged else None}
    # Statuses are relative to the current date whatever the bounds (under ``release`` a later discharge
    # is visible, yet the stay is still in progress on the current date).
    locations = [
        drop_none(
            {
                "location": {"display": t.careunit or t.eventtype},
                "status": "completed" if context.has_passed(t.outtime) else "active",
                "period": drop_none(
                    {
                        "start": fmt_datetime(t.intime),
                        "end": fmt_datetime(t.outtime) if context.time_visible(t.outtime) else None,
                    }
                ),
            }
        )
        for t in transfers
        if t.eventtype != "discharge" and context.time_visible(t.intime)
    ]
    visible_services = [s for s in services if context.time_visible(s.transfertime)]
    hospitalization = drop_none(
        {
            "admitOrigin": {"text": adm.admission_location} if adm.admission_location else None,
            "dischargeDisposition": (
                {"text": adm.discharge_location} if discharged and adm.discharge_location else None
            ),
        }
    )
    out = drop_none(
        {
            "resourceType": "Encounter",
            "id": str(adm.hadm_id),
            # the release says finished for every admission (semantics file §1); strict: as of the current date
            "status": "finished" if context.bounds == "release" or context.has_passed(adm.dischtime) else "in-progress",
            "class": {
                "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
                "code": "IMP",
                "display": "inpatient encounter",
            },
            "type": [concept(adm.admission_type)],
            "serviceType": concept(visible_services[-1].curr_service) if visible_services else None,
            "subject": ref("Patient", adm.subject_id),
            "period": drop_none(period),
            "hospitalization": hospitalization,
            "location": locations,
        }
    )
    if visible_services:
        out["extension"] = [
            {"url": "mimic-iv/service", "valueString": f"{fmt_datetime(s.transfertime)} {s.curr_service}"}
            for s in visible_services
        ]
    if context.time_visible(adm.deathtime):
        out.setdefault("extension", []).append(
            {"url": "mimic-iv/deathtime", "valueDateTime": fmt_datetime(adm.deathtime)}
        )
    return out


def encounter_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    require_patient(subject_id=args["subject_id"])
    if args["hadm_id"] is not None:
        require_encounter(subject_id=args["subject_id"], hadm_id=args["hadm_id"], context=context)
    qs = m.Admission.objects.filter(subject_id=args["subject_id"], admittime__lt=context.cutoff)
    if args["hadm_id"] is not None:
        qs = qs.filter(hadm_id=args["hadm_id"])
    admissions = list(qs.order_by("-admittime", "-hadm_id"))
    total = len(admissions)
    admissions = admissions[:ENCOUNTER_COUNT]
    ids = [a.hadm_id for a in admissions]
    transfers: dict[int, list] = {}
    for t in m.Transfer.objects.filter(hadm_id__in=ids).order_by("intime", "pk"):
        transfers.setdefault(t.hadm_id, []).append(t)
    services: dict[int, list] = {}
    for s in m.Service.objects.filter(hadm_id__in=ids).order_by("transfertime", "pk"):
        services.setdefault(s.hadm_id, []).append(s)
    resources = [
        _encounter_resource(
            a, transfers=transfers.get(a.hadm_id, []), services=services.get(a.hadm_id, []), context=context
        )
        for a in admissions
    ]
    return bundle(resources, total=total)
