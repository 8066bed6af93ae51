"""The tools of the conversation: the questions the assistant puts to the simulated patient, and
``prepare_to_answer``, which ends the tool phase of a turn."""

from __future__ import annotations

from ehr.fhir import writes
from ehr.fhir.params import Param, Tool
from ehr.fhir.patient_tools import make_patient_handler
from ehr.fhir.tool_params import SESSION_ID, SUBJECT_ID


def _patient_tool(name: str, en: str, zh: str, *extra: Param, aliases: dict[str, str] | None = None) -> Tool:
    return Tool(
        name, "patient", en, zh, (SUBJECT_ID, SESSION_ID, *extra), make_patient_handler(name), aliases=aliases or {}
    )


PATIENT_TOOLS: tuple[Tool, ...] = (
    _patient_tool(
        "patient.get_symptom_history",
        "Ask the patient about a symptom: onset, duration, character, severity, what makes it better or worse.",
        "向患者询问某一症状：起病时间、持续时间、性质、严重程度、加重或缓解因素。",
        Param(
            "query",
            "string",
            "The symptom or question to ask about, in plain words (e.g. 'chest pain').",
            "要询问的症状或问题，请使用通俗的语言（如“胸痛”）。",
        ),
        aliases={"symptom": "query", "question": "query"},
    ),
    _patient_tool(
        "patient.get_medication_adherence",
        "Ask the patient how they actually take their medications at home (missed doses, self-adjustments, reasons).",
        "向患者询问在家实际的服药情况（漏服、自行调整剂量及其原因）。",
        Param(
            "drug",
            "string",
            "A specific medication to ask about; omit for all.",
            "要询问的具体药物；省略则询问全部药物。",
        ),
        aliases={"medication": "drug", "med": "drug"},
    ),
    _patient_tool(
        "patient.get_social_history",
        "Ask the patient about social history: smoking, alcohol, drug use, living situation, support, occupation.",
        "向患者询问社会史：吸烟、饮酒、药物滥用、居住情况、社会支持、职业。",
    ),
    _patient_tool(
        "patient.get_functional_status",
        "Ask the patient about daily functioning: mobility, self-care, falls, exercise tolerance, cognition.",
        "向患者询问日常功能状况：活动能力、生活自理、跌倒、运动耐量、认知。",
    ),
    _patient_tool(
        "patient.get_pain_assessment",
        "Ask the patient to describe their pain: location, 0-10 score, character, timing, relieving factors.",
        "请患者描述疼痛：部位、0–10 分评分、性质、发作时间、缓解因素。",
    ),
)

PREPARE_TO_ANSWER = Tool(
    "prepare_to_answer",
    "control",
    "Call when you have gathered enough information and are ready to answer the physician.",
    "当已收集到足够信息、准备回答医生时调用。",
    (
        Param(
            "answer_type",
            "string",
            "tool: the answer reports on tool results; chat: it answers from the conversation.",
            "tool：回答依据工具结果；chat：回答依据对话内容。",
            enum=("tool", "chat"),
        ),
    ),
    writes.prepare_to_answer,
)
