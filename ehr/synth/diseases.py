"""Admission diagnoses: what each acute illness does to labs, vitals, orders, cultures and notes.

The illnesses themselves live in ``diseases_cardiorenal`` and ``diseases_infection``; this module
assembles them in a fixed order (patient ``i``'s first admission is ``DISEASES[i % 12]``).
"""

from ehr.synth import diseases_cardiorenal, diseases_infection
from ehr.synth.disease_types import CXR_CLEAR, Disease, Effect, Order, Study

ORDER = (
    "afib_rvr",
    "gi_bleed",
    "chf",
    "hyperkalemia",
    "sepsis_pna",
    "pyelo",
    "cellulitis",
    "dka",
    "copd",
    "nstemi",
    "pe",
    "aki",
)
_ALL = {d.key: d for d in (*diseases_cardiorenal.DISEASES, *diseases_infection.DISEASES)}
DISEASES: dict[str, Disease] = {key: _ALL[key] for key in ORDER}

# Chronic conditions an admission diagnosis replaces in coding (acute-on-chronic, complicated forms).
SUPERSEDES: dict[str, tuple[str, ...]] = {
    "chf": ("chf",),
    "afib_rvr": ("af",),
    "copd": ("copd",),
    "dka": ("t1dm",),
}

# Later admissions of the same patient are drawn from illnesses related to the first one.
READMISSION: dict[str, tuple[str, ...]] = {
    "afib_rvr": ("gi_bleed", "chf", "afib_rvr"),
    "gi_bleed": ("afib_rvr", "gi_bleed"),
    "chf": ("hyperkalemia", "aki", "chf"),
    "hyperkalemia": ("chf", "aki"),
    "sepsis_pna": ("pyelo", "aki", "sepsis_pna"),
    "pyelo": ("sepsis_pna", "pyelo"),
    "cellulitis": ("cellulitis", "sepsis_pna"),
    "dka": ("dka", "cellulitis", "pyelo"),
    "copd": ("copd", "sepsis_pna"),
    "nstemi": ("chf", "nstemi"),
    "pe": ("pe", "pyelo"),
    "aki": ("hyperkalemia", "chf"),
}


__all__ = ["CXR_CLEAR", "DISEASES", "READMISSION", "SUPERSEDES", "Disease", "Effect", "Order", "Study"]
