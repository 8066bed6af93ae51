"""Every tool's declaration: name, source, English and Chinese descriptions, parameters, handler.

Names are the benchmark's canonical names (identical in both languages); only descriptions are
translated. Shared parameters are declared once so that all searches read the same way.
"""

from __future__ import annotations

from ehr.fhir import conditions, documents, encounters, medications, observations, writes
from ehr.fhir.common import DEFAULT_COUNT, MAX_COUNT
from ehr.fhir.params import Param, Tool
from ehr.fhir.patient_tools import make_patient_handler

# --- shared parameters -------------------------------------------------------------------------

PATIENT = Param(
    "patient",
    "integer",
    "Patient id (MIMIC subject_id).",
    "患者编号（MIMIC subject_id）。",
    required=True,
    example=10001234,
)
ENCOUNTER = Param(
    "encounter",
    "integer",
    "Admission id (MIMIC hadm_id); omit to search all of the patient's admissions.",
    "住院编号（MIMIC hadm_id）；省略则检索该患者的全部住院记录。",
    example=20001234,
)
DATE_FROM = Param(
    "date_from", "string", "Earliest date to include, YYYY-MM-DD.", "起始日期（含），格式 YYYY-MM-DD。", format="date"
)
DATE_TO = Param(
    "date_to", "string", "Latest date to include, YYYY-MM-DD.", "截止日期（含），格式 YYYY-MM-DD。", format="date"
)


def _count(default: int) -> Param:
    return Param(
        "_count",
        "integer",
        f"Maximum number of results, newest first (default {default}, at most {MAX_COUNT}).",
        f"返回结果的最大条数，按时间由新到旧排列（默认 {default}，最多 {MAX_COUNT}）。",
        minimum=1,
        maximum=MAX_COUNT,
        default=default,
        example=10,
    )


SEARCH = (PATIENT, ENCOUNTER, DATE_FROM, DATE_TO)

# --- patient-tool parameters (the harness overwrites subject_id / session_id) -------------------

SESSION_ID = Param(
    "session_id", "string", "Session id.", "会话编号。", required=True, example="physassistbench_med_safety_0"
)
SUBJECT_ID = Param(
    "subject_id",
    "integer",
    "Patient id (MIMIC subject_id).",
    "患者编号（MIMIC subject_id）。",
    required=True,
    example=10001234,
)
QUESTION = Param(
    "question",
    "string",
    "The question to ask the patient, in plain words.",
    "要向患者提出的问题，请使用通俗易懂的语言。",
)


def _patient_tool(name: str, en: str, zh: str, *extra: Param) -> Tool:
    return Tool(name, "patient", en, zh, (SESSION_ID, SUBJECT_ID, *extra, QUESTION), make_patient_handler(name))


TOOLS: tuple[Tool, ...] = (
    Tool(
        "Patient.read",
        "ehr",
        "Read the patient's demographics: sex, age at the current date, deceased status, language, marital status.",
        "读取患者基本信息：性别、截至当前日期的年龄、是否死亡、语言、婚姻状况。",
        (PATIENT,),
        encounters.patient_read,
    ),
    Tool(
        "Encounter.search",
        "ehr",
        "Search the patient's hospital admissions "
        "(period, admission type, care units, service, discharge disposition).",
        "检索患者的住院记录（起止时间、入院类型、所在病区、科室、出院去向）。",
        (
            *SEARCH,
            Param(
                "status",
                "string",
                "Only admissions in this state.",
                "仅返回该状态的住院记录。",
                enum=("in-progress", "finished"),
            ),
            _count(20),
        ),
        encounters.encounter_search,
    ),
    Tool(
        "Condition.search",
        "ehr",
        "Search the patient's diagnoses (ICD-9/ICD-10 codes with titles), per admission, principal diagnosis first.",
        "检索患者的诊断（ICD-9/ICD-10 编码及名称），按住院分组，主要诊断在前。",
        (
            *SEARCH,
            Param(
                "code",
                "string",
                "ICD code or prefix (e.g. 'I50') or words of the diagnosis (e.g. 'heart failure').",
                "ICD 编码或编码前缀（如 'I50'），或诊断名称中的词（如 'heart failure'）。",
            ),
            _count(DEFAULT_COUNT),
        ),
        conditions.condition_search,
    ),
    Tool(
        "Observation.search",
        "ehr",
        "Search the patient's observations: laboratory results, vital signs or microbiology cultures "
        "(organism and antibiotic susceptibilities), newest first, with units and reference ranges.",
        "检索患者的观察结果：实验室检验、生命体征或微生物培养（病原体及药敏结果），按时间由新到旧排列，附单位和参考范围。",
        (
            *SEARCH,
            Param(
                "category",
                "string",
                "Kind of observation; omit to search all kinds.",
                "观察类别；省略则检索所有类别。",
                enum=("laboratory", "vital-signs", "microbiology"),
            ),
            Param(
                "code",
                "string",
                "Test name (e.g. 'creatinine', 'potassium', 'heart rate', 'blood culture'), case-insensitive, "
                "or a numeric MIMIC itemid (e.g. '50912').",
                "检验项目名称（英文，不区分大小写，如 'creatinine'、'potassium'、'heart rate'、'blood culture'），"
                "或 MIMIC 数字 itemid（如 '50912'）。",
                example="creatinine",
            ),
            _count(DEFAULT_COUNT),
        ),
        observations.observation_search,
    ),
    Tool(
        "MedicationRequest.search",
        "ehr",
        "Search the patient's medication orders (drug, dose, route, frequency, start/stop, status relative to today).",
        "检索患者的医嘱用药（药品、剂量、给药途径、频次、起止时间，以及相对于当前日期的状态）。",
        (
            *SEARCH,
            Param(
                "code",
                "string",
                "Drug name or part of it (e.g. 'warfarin').",
                "药品名称或其中一部分（英文，如 'warfarin'）。",
            ),
            Param(
                "status",
                "string",
                "active: still running after the current date; completed: stopped.",
                "active：当前日期之后仍在执行；completed：已停止。",
                enum=("active", "completed", "unknown"),
            ),
            _count(DEFAULT_COUNT),
        ),
        medications.medication_request_search,
    ),
    Tool(
        "MedicationAdministration.search",
        "ehr",
        "Search medication administrations recorded by nurses (eMAR): what was given, held or stopped, and when.",
        "检索护士记录的给药情况（电子给药记录 eMAR）：何时给药、暂停或停用了哪些药物。",
        (
            *SEARCH,
            Param("code", "string", "Drug name or part of it.", "药品名称或其中一部分（英文）。"),
            _count(DEFAULT_COUNT),
        ),
        medications.medication_administration_search,
    ),
    Tool(
        "DiagnosticReport.search",
        "ehr",
        "Search imaging reports (radiology: examination, findings, impression).",
        "检索影像学检查报告（放射科：检查项目、所见、印象/结论）。",
        (
            *SEARCH,
            Param(
                "code",
                "string",
                "Words of the examination or report (e.g. 'chest', 'CT head').",
                "检查项目或报告中的词（英文，如 'chest'、'CT head'）。",
            ),
            Param(
                "section",
                "string",
                "Return only this section (e.g. 'Impression', 'Findings').",
                "仅返回该段落（如 'Impression'、'Findings'）。",
            ),
            _count(10),
        ),
        documents.diagnostic_report_search,
    ),
    Tool(
        "DocumentReference.search",
        "ehr",
        "Search clinical notes (discharge summaries, radiology reports), split into sections; use 'section' to read "
        "one part, e.g. 'History of Present Illness', 'Discharge Medications', 'Social History'.",
        "检索临床文书（出院小结、放射报告），按段落拆分；可用 section 只读取某一段，"
        "如 'History of Present Illness'、'Discharge Medications'、'Social History'。",
        (
            *SEARCH,
            Param("type", "string", "Kind of note.", "文书类型。", enum=("discharge", "radiology")),
            Param(
                "section",
                "string",
                "Section heading to return (case-insensitive).",
                "要返回的段落标题（不区分大小写）。",
                example="Discharge Instructions",
            ),
            _count(5),
        ),
        documents.document_reference_search,
    ),
    Tool(
        "CarePlan.search",
        "ehr",
        "Search discharge care plans: discharge instructions, follow-up appointments, disposition and condition.",
        "检索出院照护计划：出院医嘱、随访安排、出院去向及出院时状况。",
        (PATIENT, ENCOUNTER, _count(5)),
        documents.care_plan_search,
    ),
    Tool(
        "Procedure.search",
        "ehr",
        "Search procedures performed (ICD procedure codes with titles and dates).",
        "检索已实施的操作/手术（ICD 操作编码、名称及日期）。",
        (
            *SEARCH,
            Param("code", "string", "ICD procedure code or words of its title.", "ICD 操作编码或名称中的词（英文）。"),
            _count(DEFAULT_COUNT),
        ),
        conditions.procedure_search,
    ),
    Tool(
        "AllergyIntolerance.search",
        "ehr",
        "List the patient's recorded allergies and intolerances.",
        "列出患者已记录的过敏及不耐受情况。",
        (PATIENT, ENCOUNTER, _count(DEFAULT_COUNT)),
        documents.allergy_intolerance_search,
    ),
    _patient_tool(
        "patient.get_symptom_history",
        "Ask the patient about a symptom: onset, duration, character, severity, what makes it better or worse.",
        "向患者询问某一症状：起病时间、持续时间、性质、严重程度、加重或缓解因素。",
        Param("symptom", "string", "The symptom to ask about (e.g. 'chest pain').", "要询问的症状（如“胸痛”）。"),
    ),
    _patient_tool(
        "patient.get_medication_adherence",
        "Ask the patient how they actually take their medications at home (missed doses, self-adjustments, reasons).",
        "向患者询问在家实际的服药情况（漏服、自行调整剂量及其原因）。",
        Param(
            "medication",
            "string",
            "A specific medication to ask about; omit for all.",
            "要询问的具体药物；省略则询问全部药物。",
        ),
    ),
    _patient_tool(
        "patient.get_social_history",
        "Ask the patient about social history: smoking, alcohol, drug use, living situation, support, occupation.",
        "向患者询问社会史：吸烟、饮酒、药物滥用、居住情况、社会支持、职业。",
        Param(
            "topic",
            "string",
            "Topic to ask about; omit for an overview.",
            "要询问的主题；省略则概括询问。",
            enum=("smoking", "alcohol", "substance_use", "living_situation", "support", "occupation"),
        ),
    ),
    _patient_tool(
        "patient.get_functional_status",
        "Ask the patient about daily functioning: mobility, self-care, falls, exercise tolerance, cognition.",
        "向患者询问日常功能状况：活动能力、生活自理、跌倒、运动耐量、认知。",
        Param(
            "domain",
            "string",
            "Domain to ask about; omit for an overview.",
            "要询问的方面；省略则概括询问。",
            enum=("mobility", "self_care", "falls", "exercise_tolerance", "cognition"),
        ),
    ),
    _patient_tool(
        "patient.get_pain_assessment",
        "Ask the patient to describe their pain: location, 0-10 score, character, timing, relieving factors.",
        "请患者描述疼痛：部位、0–10 分评分、性质、发作时间、缓解因素。",
        Param(
            "location", "string", "Body site to ask about; omit for any pain.", "要询问的疼痛部位；省略则询问任何疼痛。"
        ),
    ),
    Tool(
        "MedicationRequest.create",
        "write",
        "Order, change, hold or stop a medication (simulated: nothing is written to the record). A new or changed "
        "order needs dose, route and frequency; use status 'stopped' or 'on-hold' to stop or hold a drug.",
        "开具、调整、暂停或停用药物医嘱（模拟操作，不会写入病历）。新开或调整医嘱需提供剂量、给药途径和频次；"
        "停药或暂停请将 status 设为 'stopped' 或 'on-hold'。",
        (
            PATIENT,
            Param(
                "medication",
                "string",
                "Drug name (e.g. 'apixaban').",
                "药品名称（如 'apixaban'）。",
                required=True,
                example="apixaban",
            ),
            Param("dose", "string", "Dose with unit (e.g. '2.5 mg').", "剂量及单位（如 '2.5 mg'）。", example="2.5 mg"),
            Param(
                "route", "string", "Route (e.g. 'PO', 'IV', 'SC').", "给药途径（如 'PO'、'IV'、'SC'）。", example="PO"
            ),
            Param(
                "frequency",
                "string",
                "Frequency (e.g. 'BID', 'once daily').",
                "给药频次（如 'BID'、'once daily'）。",
                example="BID",
            ),
            Param(
                "status",
                "string",
                "Order status.",
                "医嘱状态。",
                enum=("active", "draft", "on-hold", "stopped", "cancelled"),
                default="active",
            ),
            Param(
                "intent",
                "string",
                "order: to be carried out; proposal: suggested to the physician.",
                "order：需执行的医嘱；proposal：向医生提出的建议。",
                enum=("order", "proposal", "plan"),
                default="order",
            ),
            Param(
                "replaces",
                "string",
                "Id of the existing order this one changes (e.g. 'rx-12345678').",
                "本医嘱所替代的既有医嘱编号（如 'rx-12345678'）。",
            ),
            Param("duration_days", "integer", "Planned duration in days.", "计划疗程（天）。", minimum=1, maximum=3650),
            Param("reason", "string", "Clinical reason.", "用药或调整的临床理由。"),
            Param("note", "string", "Free-text note (e.g. monitoring to do).", "备注（如需要的监测）。"),
            ENCOUNTER,
        ),
        writes.medication_request_create,
    ),
    Tool(
        "ServiceRequest.create",
        "write",
        "Request a test, imaging study, consultation, referral or procedure (simulated).",
        "申请检验、影像检查、会诊、转诊或操作（模拟操作）。",
        (
            PATIENT,
            Param(
                "code",
                "string",
                "What is requested (e.g. 'basic metabolic panel', 'cardiology consult').",
                "申请的项目（如 'basic metabolic panel'、'cardiology consult'）。",
                required=True,
                example="basic metabolic panel",
            ),
            Param(
                "category",
                "string",
                "Kind of request.",
                "申请类别。",
                enum=("laboratory", "imaging", "consultation", "referral", "procedure", "nursing", "other"),
            ),
            Param(
                "priority",
                "string",
                "Urgency.",
                "紧急程度。",
                enum=("routine", "urgent", "asap", "stat"),
                default="routine",
            ),
            Param(
                "occurrence_date",
                "string",
                "When it should happen, YYYY-MM-DD (today or later).",
                "计划执行日期，格式 YYYY-MM-DD（当天或之后）。",
                format="date",
            ),
            Param("reason", "string", "Clinical reason.", "申请的临床理由。"),
            Param("note", "string", "Free-text note.", "备注。"),
            ENCOUNTER,
        ),
        writes.service_request_create,
    ),
    Tool(
        "Flag.create",
        "write",
        "Put an alert flag on the patient's record (e.g. bleeding risk, drug interaction) (simulated).",
        "在患者病历上添加警示标记（如出血风险、药物相互作用）（模拟操作）。",
        (
            PATIENT,
            Param(
                "code",
                "string",
                "The alert text (e.g. 'High bleeding risk: INR 4.2 on warfarin').",
                "警示内容（如“出血风险高：服用华法林，INR 4.2”）。",
                required=True,
            ),
            Param(
                "category",
                "string",
                "Kind of flag.",
                "警示类别。",
                enum=("clinical", "drug", "lab", "safety", "behavioral", "diet", "admin"),
                default="clinical",
            ),
            Param("priority", "string", "Importance.", "重要程度。", enum=("low", "medium", "high")),
            Param(
                "period_end",
                "string",
                "Last day the flag applies, YYYY-MM-DD.",
                "警示有效期的最后一天，格式 YYYY-MM-DD。",
                format="date",
            ),
            Param("note", "string", "Free-text note.", "备注。"),
            ENCOUNTER,
        ),
        writes.flag_create,
    ),
    Tool(
        "prepare_to_answer",
        "control",
        "Call when you have gathered enough information and are ready to answer the physician.",
        "当已收集到足够信息、准备回答医生时调用。",
        (
            Param(
                "summary",
                "string",
                "Optional short summary of the findings the answer will use.",
                "可选：回答所依据的关键发现的简要总结。",
            ),
        ),
        writes.prepare_to_answer,
    ),
)
