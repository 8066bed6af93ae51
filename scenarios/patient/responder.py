"""A responder for ``ehr.fhir.register_patient_responder``: memory + persona → answer.

Not registered at import time: the scenarios app wires it (e.g. in ``AppConfig.ready``) with
lookups that read the Session row's stored memory and persona::

    register_patient_responder(make_patient_responder(memory_lookup=..., persona_lookup=...))

Without lookups the memory is built from the record for the context's patient, admission and
current date, and the persona is drawn from the session id (or patient/admission/date) as seed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ehr.fhir.context import ToolContext
from ehr.fhir.errors import ToolError
from scenarios.patient.answers import PATIENT_TOOLS, answer_patient_tool, normalise_language
from scenarios.patient.facts import HealthMemory
from scenarios.patient.memory import build_memory
from scenarios.patient.persona import Persona, choose_persona

MemoryLookup = Callable[..., HealthMemory]  # (*, context, subject_id) -> memory
PersonaLookup = Callable[..., Persona]  # (*, context, memory) -> persona
_CJK = re.compile(r"[\u4e00-\u9fff]")


def default_memory_lookup(*, context: ToolContext, subject_id: int) -> HealthMemory:
    return build_memory(subject_id=subject_id, hadm_id=context.hadm_id, current_date=context.current_date)


def default_persona_lookup(*, context: ToolContext, memory: HealthMemory) -> Persona:
    seed = context.session_id or f"{memory.subject_id}:{memory.hadm_id}:{memory.current_date}"
    return choose_persona(seed=seed, memory=memory)


def answer_language(*, arguments: dict[str, Any], context: ToolContext, default: str = "en") -> str:
    """``language`` argument, else the context's (if it carries one), else Chinese text in the question."""
    explicit = arguments.get("language") or getattr(context, "language", None)
    if explicit:
        return normalise_language(str(explicit))
    asked = " ".join(str(v) for k, v in arguments.items() if isinstance(v, str) and k != "session_id")
    return "zh" if _CJK.search(asked) else normalise_language(default)


def make_patient_responder(
    *,
    memory_lookup: MemoryLookup | None = None,
    persona_lookup: PersonaLookup | None = None,
    default_language: str = "en",
    cache_size: int = 64,
) -> Callable[..., dict[str, Any]]:
    """A ``(*, tool, arguments, context) -> dict`` responder; memories are cached per (patient, admission, date)."""
    get_memory = memory_lookup or default_memory_lookup
    get_persona = persona_lookup or default_persona_lookup
    cache: dict[tuple[Any, ...], tuple[HealthMemory, Persona]] = {}

    def respond(*, tool: str, arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        if tool not in PATIENT_TOOLS:
            raise ToolError.of("not_patient_tool", "patient_tools", tool=tool, tools=", ".join(PATIENT_TOOLS))
        subject_id = context.subject_id if context.subject_id is not None else arguments.get("subject_id")
        if subject_id is None:
            raise ToolError.of("needs_patient", "pass_subject", tool=tool)
        key = (int(subject_id), context.hadm_id, context.current_date, context.session_id)
        if key not in cache:
            if len(cache) >= cache_size:
                cache.pop(next(iter(cache)))
            memory = get_memory(context=context, subject_id=int(subject_id))
            cache[key] = (memory, get_persona(context=context, memory=memory))
        memory, persona = cache[key]
        language = answer_language(arguments=arguments, context=context, default=default_language)
        return answer_patient_tool(tool=tool, arguments=arguments, memory=memory, persona=persona, language=language)

    return respond
