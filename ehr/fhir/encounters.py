"""Patient.read and Encounter.search (admissions with their transfers and services)."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from ehr import models as m
from ehr.fhir.common import bundle, concept, drop_none, ref, require_patient, scoped_rows
from ehr.fhir.context import ToolContext, fmt_datetime
from ehr.fhir.sql import db_datetime, fetch_all, fits_integer, parse_db_date, parse_db_datetime

ENCOUNTER_COUNT = 20


class _Patient(NamedTuple):
    subject_id: int
    gender: str
    anchor_age: int
    anchor_year: int
    dod: dt.date | None


class _Admission(NamedTuple):
    hadm_id: int
    subject_id: int
    admittime: dt.datetime
    dischtime: dt.datetime | None
    deathtime: dt.datetime | None
    admission_type: str
    admission_location: str | None
    discharge_location: str | None


class _Transfer(NamedTuple):
    eventtype: str
    careunit: str | None
    intime: dt.datetime
    outtime: dt.datetime | None


class _Service(NamedTuple):
    transfertime: dt.datetime
    curr_service: str


# The patient with their latest admission started before the cutoff, in one statement.
_PATIENT = """
SELECT p.subject_id, p.gender, p.anchor_age, p.anchor_year, p.dod,
       a.marital_status, a.language, a.race, a.insurance
FROM {patients} p LEFT JOIN {adm} a ON a.hadm_id = (
  SELECT x.hadm_id FROM {adm} x WHERE x.subject_id = p.subject_id AND x.admittime < %s
  ORDER BY x.admittime DESC, x.hadm_id DESC LIMIT 1)
WHERE p.subject_id = %s"""
# The admissions (newest first, counted) with their transfers and services, in one statement: kind 0 an admission,
# 1 a transfer, 2 a service; ordered by admission, then kind, then time and key. The scope probe around it.
_ENCOUNTERS = """
WITH a AS (
  SELECT a.*, COUNT(*) OVER () AS total, ROW_NUMBER() OVER (ORDER BY a.admittime DESC, a.hadm_id DESC) AS rn
  FROM {adm} a WHERE a.subject_id = %s AND a.admittime < %s{hadm} ORDER BY rn LIMIT {limit})
SELECT 0 AS kind, a.admittime AS t1, a.hadm_id AS pk, a.hadm_id, a.subject_id, a.dischtime, a.deathtime,
       a.admission_type, a.admission_location, a.discharge_location, a.total, a.rn
FROM a
UNION ALL
SELECT 1, t.intime, t.transfer_id, t.hadm_id, NULL, t.outtime, NULL, t.eventtype, t.careunit, NULL, NULL, a.rn
FROM {transfers} t JOIN a ON t.hadm_id = a.hadm_id
UNION ALL
SELECT 2, s.transfertime, s.id, s.hadm_id, NULL, NULL, NULL, s.curr_service, NULL, NULL, NULL, a.rn
FROM {services} s JOIN a ON s.hadm_id = a.hadm_id"""

_GENDER = {"M": "male", "F": "female"}


def age_at(*, patient: m.Patient | _Patient, context: ToolContext) -> int:
    """MIMIC's shifted ages: anchor_age in anchor_year, so age moves with the session's year."""
    return patient.anchor_age + context.current_date.year - patient.anchor_year


def patient_read(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    sql = _PATIENT.format(patients=m.Patient._meta.db_table, adm=m.Admission._meta.db_table)
    rows = fetch_all(sql, [db_datetime(context.cutoff), args["subject_id"]]) if fits_integer(args["subject_id"]) else []
    if not rows:
        require_patient(subject_id=args["subject_id"])  # raises the readable error
    subject_id, gender, anchor_age, anchor_year, dod, marital_status, language, race, insurance = rows[0]
    patient = _Patient(subject_id, gender, anchor_age, anchor_year, parse_db_date(dod))
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
    # no admission yet: the columns are null
    if marital_status:
        out["maritalStatus"] = {"text": marital_status}
    if language:
        out["communication"] = [{"language": {"text": language}}]
    if race:
        out["extension"].append({"url": "mimic-iv/race", "valueString": race})
    if insurance:
        out["extension"].append({"url": "mimic-iv/insurance", "valueString": insurance})
    return out


def _encounter_resource(adm: _Admission, *, transfers: list, services: list, context: ToolContext) -> dict[str, Any]:
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
    params: list[Any] = [args["subject_id"], db_datetime(context.cutoff)]
    if args["hadm_id"] is not None:
        params.append(args["hadm_id"])
    sql = _ENCOUNTERS.format(
        adm=m.Admission._meta.db_table,
        transfers=m.Transfer._meta.db_table,
        services=m.Service._meta.db_table,
        hadm="" if args["hadm_id"] is None else " AND a.hadm_id = %s",
        limit=ENCOUNTER_COUNT,
    )
    rows = scoped_rows(query=sql, params=params, args=args, context=context, order="h.rn, h.kind, h.t1, h.pk")
    admissions: list[_Admission] = []
    transfers: dict[int, list] = {}
    services: dict[int, list] = {}
    for kind, time, _pk, hadm_id, subject_id, end, death, text1, text2, text3, _total in rows:
        time = parse_db_datetime(time)
        if kind == 0:
            row = _Admission(
                hadm_id, subject_id, time, parse_db_datetime(end), parse_db_datetime(death), text1, text2, text3
            )
            admissions.append(row)
        elif kind == 1:
            transfers.setdefault(hadm_id, []).append(_Transfer(text1, text2, time, parse_db_datetime(end)))
        else:
            services.setdefault(hadm_id, []).append(_Service(time, text1))
    resources = [
        _encounter_resource(
            a, transfers=transfers.get(a.hadm_id, []), services=services.get(a.hadm_id, []), context=context
        )
        for a in admissions
    ]
    return bundle(resources, total=rows[0][-1] if rows else 0)
