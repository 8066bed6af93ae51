"""The agentic patient: a record-grounded health memory, a persona, and answers to the patient tools.

Public API::

    from scenarios.patient import build_memory, choose_persona, answer_patient_tool
    memory = build_memory(subject_id=..., hadm_id=..., current_date=date(...))   # verified facts only
    persona = choose_persona(seed="session-1", memory=memory)
    answer_patient_tool(tool="patient.get_pain_assessment", arguments={}, memory=memory,
                        persona=persona, language="zh")

``make_patient_responder`` adapts this to ``ehr.fhir.register_patient_responder`` (not registered
here). Memory and persona are JSON round-trippable (``to_dict`` / ``from_dict``) for storage on the
Session. ``check_answer`` lets a reviewer or gate confirm an answer only states memory facts.
"""

from scenarios.patient.answers import PATIENT_TOOLS, answer_patient_tool, public_view
from scenarios.patient.check import check_answer
from scenarios.patient.facts import Fact, HealthMemory, Source
from scenarios.patient.memory import build_memory
from scenarios.patient.persona import Persona, choose_persona
from scenarios.patient.responder import make_patient_responder
from scenarios.patient.verify import DatabaseReader, check_fact, verify_memory

__all__ = [
    "PATIENT_TOOLS",
    "DatabaseReader",
    "Fact",
    "HealthMemory",
    "Persona",
    "Source",
    "answer_patient_tool",
    "build_memory",
    "check_answer",
    "check_fact",
    "choose_persona",
    "make_patient_responder",
    "public_view",
    "verify_memory",
]
