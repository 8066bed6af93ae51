"""Registry of the MIMIC-IV tables PhysReview reads: name → model, file stem, columns.

The models are the single source of truth: a table's columns are its model's concrete fields
(except a surrogate ``id``), and its required columns are the non-nullable ones.
"""

from dataclasses import dataclass
from functools import cached_property

from django.db import models

from ehr import models as m


@dataclass(frozen=True)
class MimicTableSpec:
    name: str
    model: type[models.Model]

    @property
    def path(self) -> str:
        """File stem under the MIMIC root, e.g. ``hosp/labevents`` (``.csv`` or ``.csv.gz`` appended)."""
        return self.model.mimic_path

    @cached_property
    def fields(self) -> list[models.Field]:
        return [f for f in self.model._meta.concrete_fields if not (f.primary_key and f.name == "id")]

    @property
    def columns(self) -> list[str]:
        return [f.column for f in self.fields]

    @property
    def required_columns(self) -> list[str]:
        return [f.column for f in self.fields if not f.null]

    @property
    def has_subject(self) -> bool:
        return "subject_id" in self.columns

    @property
    def db_table(self) -> str:
        return self.model._meta.db_table


# Import order: dictionaries first, then patients and admissions, then events.
TABLES: dict[str, MimicTableSpec] = {
    spec.name: spec
    for spec in (
        MimicTableSpec("d_icd_diagnoses", m.DIcdDiagnosis),
        MimicTableSpec("d_icd_procedures", m.DIcdProcedure),
        MimicTableSpec("d_labitems", m.DLabItem),
        MimicTableSpec("d_items", m.DItem),
        MimicTableSpec("patients", m.Patient),
        MimicTableSpec("admissions", m.Admission),
        MimicTableSpec("transfers", m.Transfer),
        MimicTableSpec("services", m.Service),
        MimicTableSpec("diagnoses_icd", m.DiagnosisIcd),
        MimicTableSpec("procedures_icd", m.ProcedureIcd),
        MimicTableSpec("labevents", m.LabEvent),
        MimicTableSpec("microbiologyevents", m.MicrobiologyEvent),
        MimicTableSpec("prescriptions", m.Prescription),
        MimicTableSpec("emar", m.Emar),
        MimicTableSpec("omr", m.Omr),
        MimicTableSpec("icustays", m.IcuStay),
        MimicTableSpec("chartevents", m.ChartEvent),
        MimicTableSpec("discharge", m.DischargeNote),
        MimicTableSpec("radiology", m.RadiologyNote),
    )
}
