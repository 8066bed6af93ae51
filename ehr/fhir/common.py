"""Small FHIR R4 building blocks and the shared patient/encounter checks."""

from __future__ import annotations

from typing import Any

from ehr import models as m
from ehr.fhir.context import ToolContext
from ehr.fhir.errors import ToolError
from ehr.fhir.sql import db_datetime, fetch_all, fits_integer

ITEMID_SYSTEM = "mimic-iv/itemid"
OBS_CATEGORY_SYSTEM = "http://terminology.hl7.org/CodeSystem/observation-category"
ICD_DX_SYSTEMS = {9: "http://hl7.org/fhir/sid/icd-9-cm", 10: "http://hl7.org/fhir/sid/icd-10-cm"}
ICD_PX_SYSTEMS = {9: "http://hl7.org/fhir/sid/icd-9-cm", 10: "http://www.cms.gov/Medicare/Coding/ICD10"}

DEFAULT_COUNT = 50
MAX_COUNT = 500


def ref(kind: str, ident: Any) -> dict[str, str]:
    return {"reference": f"{kind}/{ident}"}


def bundle(resources: list[dict[str, Any]], *, total: int | None = None) -> dict[str, Any]:
    """A searchset Bundle; ``total`` is the number of matches before ``_count`` truncation."""
    return {
        "resourceType": "Bundle",
        "type": "searchset",
        "total": len(resources) if total is None else total,
        "entry": [{"resource": r} for r in resources],
    }


def quantity(value: float | None, unit: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    out: dict[str, Any] = {"value": int(value) if float(value).is_integer() and abs(value) < 1e15 else value}
    if unit:
        out["unit"] = unit
    return out


def concept(text: str, *, system: str | None = None, code: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"text": text}
    if system and code:
        out["coding"] = [{"system": system, "code": code, "display": text}]
    return out


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    """FHIR omits absent elements rather than sending nulls."""
    return {k: v for k, v in d.items() if v is not None and v != [] and v != {}}


def require_patient(*, subject_id: int) -> m.Patient:
    patient = m.Patient.objects.filter(subject_id=subject_id).first()
    if patient is None:
        raise ToolError.of("patient_not_found", "use_subject", subject_id=subject_id)
    return patient


def require_encounter(*, subject_id: int, hadm_id: int, context: ToolContext) -> m.Admission:
    """The admission must belong to the patient and have started by the current date."""
    adm = m.Admission.objects.filter(hadm_id=hadm_id, subject_id=subject_id, admittime__lt=context.cutoff).first()
    if adm is None:
        raise ToolError.of(
            "encounter_not_found", "use_hadm", hadm_id=hadm_id, subject_id=subject_id, date=context.current_date
        )
    return adm


_SCOPE = """
SELECT (SELECT COUNT(*) FROM {patients} WHERE subject_id = %s),
       (SELECT COUNT(*) FROM {admissions} WHERE hadm_id = %s AND subject_id = %s AND admittime < %s)"""


def check_scope(*, args: dict[str, Any], context: ToolContext) -> None:
    """Validate patient (and encounter, if given); searches call it up front or when nothing matched.

    One hand-written statement (the ORM's two queries cost ~1 ms of CPU per tool call); a bad scope
    then goes through the ``require_*`` checks for their readable error.
    """
    patient, encounter = args["subject_id"], args.get("hadm_id")
    if fits_integer(patient) and (encounter is None or fits_integer(encounter)):
        sql = _SCOPE.format(patients=m.Patient._meta.db_table, admissions=m.Admission._meta.db_table)
        (known, enc_known), *_ = fetch_all(sql, [patient, encounter, patient, db_datetime(context.cutoff)])
        if known and (encounter is None or enc_known):
            return
    require_patient(subject_id=patient)
    if encounter is not None:
        require_encounter(subject_id=patient, hadm_id=encounter, context=context)


# A search and its scope checks in one statement: the one-row probe left-joined to the search (whose last column
# ``rn`` numbers its rows in the wanted order), so a hit, "no results" and a bad patient/encounter all cost one round
# trip (Observation.search's lab query does the same, see observation_labs.py).
_SCOPED = """
SELECT p.patient_known, p.enc_known, h.* FROM (
  SELECT (SELECT COUNT(*) FROM {patients} WHERE subject_id = %s) AS patient_known,
         (SELECT COUNT(*) FROM {admissions} WHERE hadm_id = %s AND subject_id = %s AND admittime < %s) AS enc_known
) p LEFT JOIN ({query}) h ON 1 = 1
ORDER BY {order}"""


def scoped_rows(
    *, query: str, params: list[Any], args: dict[str, Any], context: ToolContext, order: str = "h.rn"
) -> list[tuple]:
    """The rows of ``query`` (without ``rn``), after the checks of :func:`check_scope` (a bad scope raises its error).

    ``query`` selects ``ROW_NUMBER() OVER (ORDER BY ...) AS rn`` last and is ordered and limited by it (or by
    ``order``, over the columns of ``h``, which then must put a non-null ``rn`` last on every row).
    """
    patient, encounter = args["subject_id"], args.get("hadm_id")
    if not fits_integer(patient, encounter):
        check_scope(args=args, context=context)  # the ORM's checks answer "not found"
        return []
    sql = _SCOPED.format(
        query=query, order=order, patients=m.Patient._meta.db_table, admissions=m.Admission._meta.db_table
    )
    rows = fetch_all(sql, [patient, encounter, patient, db_datetime(context.cutoff), *params])
    known, enc_known = rows[0][0], rows[0][1]
    if not known or (encounter is not None and not enc_known):
        check_scope(args=args, context=context)  # raises the readable error
    if rows[0][-1] is None:  # the probe row alone: nothing matched
        return []
    return [r[2:-1] for r in rows]


def check_window(*, args: dict[str, Any]) -> None:
    if args.get("date_from") and args.get("date_to") and args["date_from"] > args["date_to"]:
        raise ToolError.of("window", "swap", date_from=args["date_from"], date_to=args["date_to"])


INTERP_SYSTEM = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"
INTERP = {
    "H": "High",
    "L": "Low",
    "A": "Abnormal",
    "N": "Normal",
    "S": "Susceptible",
    "R": "Resistant",
    "I": "Intermediate",
}


def interpretation(code: str) -> list[dict[str, Any]]:
    return [{"coding": [{"system": INTERP_SYSTEM, "code": code, "display": INTERP[code]}]}]
