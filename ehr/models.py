"""MIMIC-IV tables (v2.2–3.1 layout), one model per table, MIMIC column names kept.

Identifiers (``subject_id``, ``hadm_id``, ``itemid``) are plain indexed integers, not foreign
keys: real MIMIC files reference rows that are not in the extract (``--subjects`` imports, the
demo subset), tables are imported independently and replaced wholesale, and every tool query
filters by these columns directly. A model's nullability is the importer's contract: a column
that is ``null=False`` is a required header column and a required value.

Indexes are chosen for the FHIR tool queries: by admission + item + time, by subject + time,
and by label in the dictionaries.
"""

from django.db import models
from django.db.models.functions import Upper
from django.utils.translation import gettext_lazy as _


class MimicTable(models.Model):
    """Base for imported tables; ``mimic_path`` is the file stem under the MIMIC root."""

    mimic_path: str = ""

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self._meta.db_table} {self.pk}"


# --- hosp ------------------------------------------------------------------------------------


class Patient(MimicTable):
    mimic_path = "hosp/patients"
    subject_id = models.IntegerField(primary_key=True)
    gender = models.CharField(max_length=1)
    anchor_age = models.SmallIntegerField()
    anchor_year = models.SmallIntegerField()
    anchor_year_group = models.CharField(max_length=20, null=True)
    dod = models.DateField(null=True)

    class Meta:
        db_table = "mimic_patients"
        verbose_name = _("patient")
        verbose_name_plural = _("patients")

    def __str__(self) -> str:
        return f"Patient {self.subject_id}"


class Admission(MimicTable):
    mimic_path = "hosp/admissions"
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(primary_key=True)
    admittime = models.DateTimeField()
    dischtime = models.DateTimeField(null=True)
    deathtime = models.DateTimeField(null=True)
    admission_type = models.CharField(max_length=40)
    admit_provider_id = models.CharField(max_length=10, null=True)
    admission_location = models.CharField(max_length=60, null=True)
    discharge_location = models.CharField(max_length=60, null=True)
    insurance = models.CharField(max_length=255, null=True)
    language = models.CharField(max_length=25, null=True)
    marital_status = models.CharField(max_length=30, null=True)
    race = models.CharField(max_length=80, null=True)
    edregtime = models.DateTimeField(null=True)
    edouttime = models.DateTimeField(null=True)
    hospital_expire_flag = models.SmallIntegerField(null=True)

    class Meta:
        db_table = "mimic_admissions"
        verbose_name = _("admission")
        verbose_name_plural = _("admissions")
        indexes = [models.Index(fields=["subject_id", "admittime"], name="adm_subject_time")]

    def __str__(self) -> str:
        return f"Admission {self.hadm_id}"


class Transfer(MimicTable):
    mimic_path = "hosp/transfers"
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(null=True, db_index=True)
    transfer_id = models.BigIntegerField(primary_key=True)
    eventtype = models.CharField(max_length=10)
    careunit = models.CharField(max_length=255, null=True)
    intime = models.DateTimeField()
    outtime = models.DateTimeField(null=True)

    class Meta:
        db_table = "mimic_transfers"
        verbose_name = _("transfer")
        verbose_name_plural = _("transfers")


class Service(MimicTable):
    mimic_path = "hosp/services"
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(db_index=True)
    transfertime = models.DateTimeField()
    prev_service = models.CharField(max_length=10, null=True)
    curr_service = models.CharField(max_length=10)

    class Meta:
        db_table = "mimic_services"
        verbose_name = _("service")
        verbose_name_plural = _("services")


class DIcdDiagnosis(MimicTable):
    mimic_path = "hosp/d_icd_diagnoses"
    icd_code = models.CharField(max_length=7)
    icd_version = models.SmallIntegerField()
    long_title = models.CharField(max_length=255)

    class Meta:
        db_table = "mimic_d_icd_diagnoses"
        verbose_name = _("ICD diagnosis code")
        verbose_name_plural = _("ICD diagnosis codes")
        constraints = [models.UniqueConstraint(fields=["icd_code", "icd_version"], name="d_icd_dx_code_version")]


class DiagnosisIcd(MimicTable):
    mimic_path = "hosp/diagnoses_icd"
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(db_index=True)
    seq_num = models.SmallIntegerField()
    icd_code = models.CharField(max_length=7)
    icd_version = models.SmallIntegerField()

    class Meta:
        db_table = "mimic_diagnoses_icd"
        verbose_name = _("admission diagnosis (ICD)")
        verbose_name_plural = _("admission diagnoses (ICD)")
        indexes = [models.Index(fields=["icd_code", "icd_version"], name="dx_code_version")]


class DIcdProcedure(MimicTable):
    mimic_path = "hosp/d_icd_procedures"
    icd_code = models.CharField(max_length=7)
    icd_version = models.SmallIntegerField()
    long_title = models.CharField(max_length=255)

    class Meta:
        db_table = "mimic_d_icd_procedures"
        verbose_name = _("ICD procedure code")
        verbose_name_plural = _("ICD procedure codes")
        constraints = [models.UniqueConstraint(fields=["icd_code", "icd_version"], name="d_icd_px_code_version")]


class ProcedureIcd(MimicTable):
    mimic_path = "hosp/procedures_icd"
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(db_index=True)
    seq_num = models.SmallIntegerField()
    chartdate = models.DateField()
    icd_code = models.CharField(max_length=7)
    icd_version = models.SmallIntegerField()

    class Meta:
        db_table = "mimic_procedures_icd"
        verbose_name = _("admission procedure (ICD)")
        verbose_name_plural = _("admission procedures (ICD)")


class DLabItem(MimicTable):
    mimic_path = "hosp/d_labitems"
    itemid = models.IntegerField(primary_key=True)
    label = models.CharField(max_length=50, null=True, db_index=True)
    fluid = models.CharField(max_length=50, null=True)
    category = models.CharField(max_length=50, null=True)

    class Meta:
        db_table = "mimic_d_labitems"
        verbose_name = _("lab test definition")
        verbose_name_plural = _("lab test definitions")
        # Tools match lab names case-insensitively (UPPER(label) = UPPER(%s)).
        indexes = [models.Index(Upper("label"), name="labitem_label_upper")]


class LabEvent(MimicTable):
    mimic_path = "hosp/labevents"
    labevent_id = models.BigIntegerField(primary_key=True)
    subject_id = models.IntegerField()
    hadm_id = models.IntegerField(null=True)
    specimen_id = models.BigIntegerField()
    itemid = models.IntegerField()
    order_provider_id = models.CharField(max_length=10, null=True)
    charttime = models.DateTimeField()
    storetime = models.DateTimeField(null=True)
    value = models.TextField(null=True)
    valuenum = models.FloatField(null=True)
    valueuom = models.CharField(max_length=20, null=True)
    ref_range_lower = models.FloatField(null=True)
    ref_range_upper = models.FloatField(null=True)
    flag = models.CharField(max_length=10, null=True)
    priority = models.CharField(max_length=7, null=True)
    comments = models.TextField(null=True)

    class Meta:
        db_table = "mimic_labevents"
        verbose_name = _("lab result")
        verbose_name_plural = _("lab results")
        indexes = [
            models.Index(fields=["hadm_id", "itemid", "-charttime"], name="lab_hadm_item_time"),
            models.Index(fields=["subject_id", "itemid", "-charttime"], name="lab_subject_item_time"),
            models.Index(fields=["subject_id", "-charttime"], name="lab_subject_time"),
        ]


class MicrobiologyEvent(MimicTable):
    mimic_path = "hosp/microbiologyevents"
    microevent_id = models.BigIntegerField(primary_key=True)
    subject_id = models.IntegerField()
    hadm_id = models.IntegerField(null=True, db_index=True)
    micro_specimen_id = models.BigIntegerField()
    order_provider_id = models.CharField(max_length=10, null=True)
    chartdate = models.DateTimeField()
    charttime = models.DateTimeField(null=True)
    spec_itemid = models.IntegerField()
    spec_type_desc = models.CharField(max_length=100)
    test_seq = models.SmallIntegerField()
    storedate = models.DateTimeField(null=True)
    storetime = models.DateTimeField(null=True)
    test_itemid = models.IntegerField()
    test_name = models.CharField(max_length=100)
    org_itemid = models.IntegerField(null=True)
    org_name = models.CharField(max_length=100, null=True)
    isolate_num = models.SmallIntegerField(null=True)
    quantity = models.CharField(max_length=50, null=True)
    ab_itemid = models.IntegerField(null=True)
    ab_name = models.CharField(max_length=30, null=True)
    dilution_text = models.CharField(max_length=10, null=True)
    dilution_comparison = models.CharField(max_length=20, null=True)
    dilution_value = models.FloatField(null=True)
    interpretation = models.CharField(max_length=5, null=True)
    comments = models.TextField(null=True)

    class Meta:
        db_table = "mimic_microbiologyevents"
        verbose_name = _("microbiology result")
        verbose_name_plural = _("microbiology results")
        indexes = [models.Index(fields=["subject_id", "-chartdate"], name="micro_subject_date")]


class Prescription(MimicTable):
    mimic_path = "hosp/prescriptions"
    subject_id = models.IntegerField()
    hadm_id = models.IntegerField()
    pharmacy_id = models.BigIntegerField()
    poe_id = models.CharField(max_length=25, null=True)
    poe_seq = models.IntegerField(null=True)
    order_provider_id = models.CharField(max_length=10, null=True)
    starttime = models.DateTimeField(null=True)
    stoptime = models.DateTimeField(null=True)
    drug_type = models.CharField(max_length=20)
    drug = models.CharField(max_length=255)
    formulary_drug_cd = models.CharField(max_length=50, null=True)
    gsn = models.CharField(max_length=255, null=True)
    ndc = models.CharField(max_length=25, null=True)
    prod_strength = models.CharField(max_length=255, null=True)
    form_rx = models.CharField(max_length=25, null=True)
    dose_val_rx = models.CharField(max_length=100, null=True)
    dose_unit_rx = models.CharField(max_length=50, null=True)
    form_val_disp = models.CharField(max_length=50, null=True)
    form_unit_disp = models.CharField(max_length=50, null=True)
    doses_per_24_hrs = models.FloatField(null=True)
    route = models.CharField(max_length=50, null=True)

    class Meta:
        db_table = "mimic_prescriptions"
        verbose_name = _("prescription")
        verbose_name_plural = _("prescriptions")
        indexes = [
            models.Index(fields=["hadm_id", "-starttime"], name="rx_hadm_start"),
            models.Index(fields=["subject_id", "-starttime"], name="rx_subject_start"),
        ]


class Emar(MimicTable):
    mimic_path = "hosp/emar"
    subject_id = models.IntegerField()
    hadm_id = models.IntegerField(null=True)
    emar_id = models.CharField(max_length=25, primary_key=True)
    emar_seq = models.IntegerField()
    poe_id = models.CharField(max_length=25, null=True)
    pharmacy_id = models.BigIntegerField(null=True)
    enter_provider_id = models.CharField(max_length=10, null=True)
    charttime = models.DateTimeField()
    medication = models.TextField(null=True)
    event_txt = models.CharField(max_length=100, null=True)
    scheduletime = models.DateTimeField(null=True)
    storetime = models.DateTimeField(null=True)

    class Meta:
        db_table = "mimic_emar"
        verbose_name = _("medication administration (eMAR)")
        verbose_name_plural = _("medication administrations (eMAR)")
        indexes = [
            models.Index(fields=["hadm_id", "-charttime"], name="emar_hadm_time"),
            models.Index(fields=["subject_id", "-charttime"], name="emar_subject_time"),
        ]


class Omr(MimicTable):
    mimic_path = "hosp/omr"
    subject_id = models.IntegerField()
    chartdate = models.DateField()
    seq_num = models.SmallIntegerField()
    result_name = models.CharField(max_length=100)
    result_value = models.TextField()

    class Meta:
        db_table = "mimic_omr"
        verbose_name = _("outpatient measurement (OMR)")
        verbose_name_plural = _("outpatient measurements (OMR)")
        indexes = [models.Index(fields=["subject_id", "-chartdate"], name="omr_subject_date")]


# --- icu -------------------------------------------------------------------------------------


class IcuStay(MimicTable):
    mimic_path = "icu/icustays"
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(db_index=True)
    stay_id = models.IntegerField(primary_key=True)
    first_careunit = models.CharField(max_length=255, null=True)
    last_careunit = models.CharField(max_length=255, null=True)
    intime = models.DateTimeField(null=True)
    outtime = models.DateTimeField(null=True)
    los = models.FloatField(null=True)

    class Meta:
        db_table = "mimic_icustays"
        verbose_name = _("ICU stay")
        verbose_name_plural = _("ICU stays")


class DItem(MimicTable):
    mimic_path = "icu/d_items"
    itemid = models.IntegerField(primary_key=True)
    label = models.CharField(max_length=100, db_index=True)
    abbreviation = models.CharField(max_length=50, null=True)
    linksto = models.CharField(max_length=30, null=True)
    category = models.CharField(max_length=50, null=True)
    unitname = models.CharField(max_length=50, null=True)
    param_type = models.CharField(max_length=20, null=True)
    lownormalvalue = models.FloatField(null=True)
    highnormalvalue = models.FloatField(null=True)

    class Meta:
        db_table = "mimic_d_items"
        verbose_name = _("ICU chart item definition")
        verbose_name_plural = _("ICU chart item definitions")


class ChartEvent(MimicTable):
    mimic_path = "icu/chartevents"
    subject_id = models.IntegerField()
    hadm_id = models.IntegerField(null=True)
    stay_id = models.IntegerField(null=True)
    caregiver_id = models.IntegerField(null=True)
    charttime = models.DateTimeField()
    storetime = models.DateTimeField(null=True)
    itemid = models.IntegerField()
    value = models.TextField(null=True)
    valuenum = models.FloatField(null=True)
    valueuom = models.CharField(max_length=20, null=True)
    warning = models.SmallIntegerField(null=True)

    class Meta:
        db_table = "mimic_chartevents"
        verbose_name = _("ICU chart event")
        verbose_name_plural = _("ICU chart events")
        indexes = [
            models.Index(fields=["hadm_id", "itemid", "-charttime"], name="chart_hadm_item_time"),
            models.Index(fields=["subject_id", "-charttime"], name="chart_subject_time"),
        ]


# --- note ------------------------------------------------------------------------------------


class Note(MimicTable):
    note_id = models.CharField(max_length=25, primary_key=True)
    subject_id = models.IntegerField()
    hadm_id = models.IntegerField(null=True, db_index=True)
    note_type = models.CharField(max_length=2)
    note_seq = models.SmallIntegerField()
    charttime = models.DateTimeField()
    storetime = models.DateTimeField(null=True)
    text = models.TextField()

    class Meta:
        abstract = True


class DischargeNote(Note):
    mimic_path = "note/discharge"

    class Meta:
        db_table = "mimic_note_discharge"
        verbose_name = _("discharge note")
        verbose_name_plural = _("discharge notes")
        indexes = [models.Index(fields=["subject_id", "-charttime"], name="dis_subject_time")]


class RadiologyNote(Note):
    mimic_path = "note/radiology"

    class Meta:
        db_table = "mimic_note_radiology"
        verbose_name = _("radiology report")
        verbose_name_plural = _("radiology reports")
        indexes = [models.Index(fields=["subject_id", "-charttime"], name="rad_subject_time")]
