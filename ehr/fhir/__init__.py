"""FHIR R4-shaped EHR tools over the MIMIC-IV tables.

Public API::

    from ehr.fhir import ToolContext, execute_tool, tool_schemas
    ctx = ToolContext(current_date=date(2180, 7, 23), subject_id=10001234)
    execute_tool(name="Observation.search", arguments={"subject_id": 10001234, "code": "creatinine"}, context=ctx)

The date-cutoff rule is defined (once) in :mod:`ehr.fhir.context`.
"""

from ehr.fhir.context import ToolContext, visibility_cutoff
from ehr.fhir.execute import execute_tool
from ehr.fhir.patient_tools import register_patient_responder
from ehr.fhir.registry import (
    API_NAME_RE,
    API_NAMES,
    LANGUAGES,
    REGISTRY,
    TOOL_NAMES,
    api_name,
    canonical_name,
    schema_hash,
    tool_schemas,
)

__all__ = [
    "API_NAMES",
    "API_NAME_RE",
    "LANGUAGES",
    "REGISTRY",
    "TOOL_NAMES",
    "ToolContext",
    "api_name",
    "canonical_name",
    "execute_tool",
    "register_patient_responder",
    "schema_hash",
    "tool_schemas",
    "visibility_cutoff",
]
