"""What the planner needs to know about each admission, read once from the record in a stable order.

The planner only decides *what* to ask; every value a turn shows comes from ``execute_tool`` at the
session's cutoff. So these facts are a coarse index (which drugs, which labs, when), never quoted.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass, field

from ehr import models as m

WEIGHT_ITEMID = 226512  # chartevents "Admission Weight (Kg)"


@dataclass
class AdmissionFacts:
    subject_id: int
    hadm_id: int
    admit: dt.date
    discharge: dt.date
    gender: str
    principal_dx: str
    drug_starts: dict[str, dt.date] = field(default_factory=dict)  # drug name → first start date
    labs: dict[str, list[tuple[dt.datetime, float | None]]] = field(default_factory=dict)  # label → times
    weight_dates: list[dt.date] = field(default_factory=list)
    discharge_note_date: dt.date | None = None
    has_followup: bool = False

    def labs_by(self, *, label: str, day: dt.date, since: dt.date | None = None) -> list[float | None]:
        """Values of a lab charted in this admission before ``day`` (optionally from ``since``).

        Mirrors the cutoff rule of ``ehr.fhir.context``: a session on ``day`` sees nothing charted that day.
        """
        return [
            v
            for t, v in self.labs.get(label, [])
            if t.date() < day and (since is None or t.date() >= since) and v is not None
        ]

    def weight_by(self, *, day: dt.date) -> bool:
        """A weight was charted before ``day`` (visible to a session on ``day``)."""
        return any(d < day for d in self.weight_dates)

    def drugs_by(self, *, day: dt.date) -> list[str]:
        """Drugs started strictly before ``day`` (charted before the current date)."""
        return sorted(d for d, start in self.drug_starts.items() if start < day)


def load_admission_facts() -> list[AdmissionFacts]:
    """All admissions with their coarse facts, ordered by (subject_id, hadm_id)."""
    patients = dict(m.Patient.objects.values_list("subject_id", "gender"))
    titles = {(c, v): t for c, v, t in m.DIcdDiagnosis.objects.values_list("icd_code", "icd_version", "long_title")}
    principal: dict[int, str] = {}
    for hadm, code, version in m.DiagnosisIcd.objects.filter(seq_num=1).values_list(
        "hadm_id", "icd_code", "icd_version"
    ):
        principal[hadm] = titles.get((code, version), code)
    out: dict[int, AdmissionFacts] = {}
    for subject, hadm, admit, disch in m.Admission.objects.order_by("subject_id", "hadm_id").values_list(
        "subject_id", "hadm_id", "admittime", "dischtime"
    ):
        out[hadm] = AdmissionFacts(
            subject_id=subject,
            hadm_id=hadm,
            admit=admit.date(),
            discharge=disch.date(),
            gender=patients.get(subject, "U"),
            principal_dx=principal.get(hadm, ""),
        )
    for hadm, drug, start in m.Prescription.objects.filter(hadm_id__in=out, starttime__isnull=False).values_list(
        "hadm_id", "drug", "starttime"
    ):
        facts = out[hadm]
        day = start.date()
        if drug not in facts.drug_starts or day < facts.drug_starts[drug]:
            facts.drug_starts[drug] = day
    labels = dict(m.DLabItem.objects.values_list("itemid", "label"))
    series: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for hadm, itemid, time, value in m.LabEvent.objects.filter(hadm_id__in=out).values_list(
        "hadm_id", "itemid", "charttime", "valuenum"
    ):
        series[hadm][labels.get(itemid, str(itemid))].append((time, value))
    for hadm, by_label in series.items():
        # Value as tie-breaker: rows of equal time must come out the same on every database.
        out[hadm].labs = {
            k: sorted(v, key=lambda p: (p[0], p[1] is None, p[1] or 0.0)) for k, v in sorted(by_label.items())
        }
    for hadm, time in m.ChartEvent.objects.filter(hadm_id__in=out, itemid=WEIGHT_ITEMID).values_list(
        "hadm_id", "charttime"
    ):
        out[hadm].weight_dates.append(time.date())
    for hadm, time, text in m.DischargeNote.objects.filter(hadm_id__in=out).values_list("hadm_id", "charttime", "text"):
        facts = out[hadm]
        facts.discharge_note_date = time.date()
        # A patient who died has no discharge medications or follow-up to plan ("None", "___").
        facts.has_followup = (
            "Followup Instructions:" in text
            and "Discharge Medications:" in text
            and not re.search(r"Discharge Medications:\s*None|Followup Instructions:\s*___|\bExpired\b", text)
        )
    return [out[h] for h in sorted(out, key=lambda h: (out[h].subject_id, h))]
