"""Every tool's declaration: name, source, English and Chinese descriptions, parameters, handler.

The model-facing contract (names, parameter names, types, required lists, enums) is exactly the
released PhysAssistBench one (``shared/formats/pab-protocol.md``); the descriptions are ours, in
English and Chinese. ``aliases`` accept the FHIR-style names of our earlier versions (``patient``,
``encounter``, ``code`` for a drug, ``section`` …) and the release's known wrong names; shared
parameters are declared once so that all searches read the same way.
"""

from __future__ import annotations

from ehr.fhir.params import Tool
from ehr.fhir.tool_conversation import PATIENT_TOOLS, PREPARE_TO_ANSWER
from ehr.fhir.tool_params import HADM_ID, OBSERVATION_COUNT, SEARCH, SESSION_ID, SUBJECT_ID
from ehr.fhir.tool_reads import READ_TOOLS
from ehr.fhir.tool_writes import WRITE_TOOLS

__all__ = ["HADM_ID", "OBSERVATION_COUNT", "SEARCH", "SESSION_ID", "SUBJECT_ID", "TOOLS"]

# The released contract's order: reads, the patient's questions, writes, then prepare_to_answer.
TOOLS: tuple[Tool, ...] = (*READ_TOOLS, *PATIENT_TOOLS, *WRITE_TOOLS, PREPARE_TO_ANSWER)
