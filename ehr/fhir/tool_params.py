"""Parameters every tool family shares (the patient, the admission, the session), declared once so that all
searches read the same way; the tool declarations are in ``tool_reads``, ``tool_conversation`` and ``tool_writes``."""

from __future__ import annotations

from ehr.fhir.params import Param

# --- shared parameters -------------------------------------------------------------------------

SUBJECT_ID = Param(
    "subject_id",
    "integer",
    "Patient id (MIMIC subject_id).",
    "患者编号（MIMIC subject_id）。",
    required=True,
    example=10001234,
)
HADM_ID = Param(
    "hadm_id",
    "integer",
    "Admission id (MIMIC hadm_id); omit to search all of the patient's admissions.",
    "住院编号（MIMIC hadm_id）；省略则检索该患者的全部住院记录。",
    example=20001234,
)
SEARCH = (SUBJECT_ID, HADM_ID)
OBSERVATION_COUNT = 20

SESSION_ID = Param(
    "session_id",
    "string",
    "Session id (from the session info).",
    "会话编号（见会话信息）。",
    required=True,
    example="physassistbench_med_safety_0",
)
