"""The EHR read tools (``Patient.read`` and the ``*.search`` tools): what they return, their parameters and the
aliases they accept, in the released contract's order."""

from __future__ import annotations

from ehr.fhir import conditions, documents, encounters, medications, observations
from ehr.fhir.common import MAX_COUNT
from ehr.fhir.params import Param, Tool
from ehr.fhir.tool_params import OBSERVATION_COUNT, SEARCH, SUBJECT_ID

_DRUG_ALIASES = {"drug": "medication", "med": "medication", "code": "medication"}

READ_TOOLS: tuple[Tool, ...] = (
    Tool(
        "Patient.read",
        "ehr",
        "Read the patient's demographics: sex, age at the current date, deceased status, language, marital status.",
        "读取患者基本信息：性别、截至当前日期的年龄、是否死亡、语言、婚姻状况。",
        (SUBJECT_ID,),
        encounters.patient_read,
    ),
    Tool(
        "Encounter.search",
        "ehr",
        "Search the patient's hospital admissions "
        "(period, admission type, care units, service, discharge disposition).",
        "检索患者的住院记录（起止时间、入院类型、所在病区、科室、出院去向）。",
        SEARCH,
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
            Param(
                "clinical_status",
                "string",
                "active: coded in the most recent admission; resolved/inactive: only in earlier admissions.",
                "active：最近一次住院中编码的诊断；resolved/inactive：仅见于更早住院的诊断。",
                enum=("active", "resolved", "inactive"),
            ),
        ),
        conditions.condition_search,
        aliases={"icd_code": "code", "diagnosis": "code", "status": "clinical_status"},
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
            Param(
                "date_from",
                "string",
                "Earliest date to include, YYYY-MM-DD.",
                "起始日期（含），格式 YYYY-MM-DD。",
                format="date",
            ),
            Param(
                "date_to",
                "string",
                "Latest date to include, YYYY-MM-DD.",
                "截止日期（含），格式 YYYY-MM-DD。",
                format="date",
            ),
            Param(
                "_count",
                "integer",
                f"Maximum number of results, newest first (default {OBSERVATION_COUNT}).",
                f"返回结果的最大条数，按时间由新到旧排列（默认 {OBSERVATION_COUNT}）。",
                minimum=1,
                maximum=MAX_COUNT,
                default=OBSERVATION_COUNT,
                example=10,
            ),
        ),
        observations.observation_search,
        aliases={
            "test_name": "code",
            "lab_test": "code",
            "item_name": "code",
            "vital_name": "code",
            "type": "category",
            "limit": "_count",
            "count": "_count",
        },
        value_aliases={
            "category": {
                "lab": "laboratory",
                "labs": "laboratory",
                "vital": "vital-signs",
                "vitals": "vital-signs",
                "vital_signs": "vital-signs",
                "micro": "microbiology",
            }
        },
    ),
    Tool(
        "MedicationRequest.search",
        "ehr",
        "Search the patient's medication orders (drug, dose, route, frequency, start/stop, status relative to today).",
        "检索患者的医嘱用药（药品、剂量、给药途径、频次、起止时间，以及相对于当前日期的状态）。",
        (
            *SEARCH,
            Param(
                "medication",
                "string",
                "Drug name or part of it (e.g. 'warfarin').",
                "药品名称或其中一部分（英文，如 'warfarin'）。",
            ),
            Param(
                "status",
                "string",
                "active: still running on the current date; completed or stopped: ended before it.",
                "active：当前日期仍在执行；completed 或 stopped：在当前日期之前已结束。",
                enum=("active", "completed", "stopped"),
            ),
        ),
        medications.medication_request_search,
        aliases=_DRUG_ALIASES,
    ),
    Tool(
        "MedicationAdministration.search",
        "ehr",
        "Search medication administrations recorded by nurses (eMAR): what was given, held or stopped, and when.",
        "检索护士记录的给药情况（电子给药记录 eMAR）：何时给药、暂停或停用了哪些药物。",
        (*SEARCH, Param("medication", "string", "Drug name or part of it.", "药品名称或其中一部分（英文）。")),
        medications.medication_administration_search,
        aliases=_DRUG_ALIASES,
    ),
    Tool(
        "DiagnosticReport.search",
        "ehr",
        "Search imaging reports (radiology: examination, findings, impression).",
        "检索影像学检查报告（放射科：检查项目、所见、印象/结论）。",
        (
            *SEARCH,
            Param(
                "report_type",
                "string",
                "Words of the examination or report (e.g. 'chest', 'CT head').",
                "检查项目或报告中的词（英文，如 'chest'、'CT head'）。",
            ),
        ),
        documents.diagnostic_report_search,
        aliases={"type": "report_type", "code": "report_type"},
    ),
    Tool(
        "DocumentReference.search",
        "ehr",
        "Search clinical notes (discharge summaries, radiology reports), split into sections. 'keyword' that names "
        "a section (e.g. 'History of Present Illness', 'Discharge Medications', 'Social History') returns that "
        "section; other words return the sections that contain them.",
        "检索临床文书（出院小结、放射报告），按段落拆分。keyword 为段落标题时（如 'History of Present Illness'、"
        "'Discharge Medications'、'Social History'）返回该段落；其他词语返回包含该词的段落。",
        (
            *SEARCH,
            Param(
                "type_code",
                "string",
                "Kind of note.",
                "文书类型。",
                enum=("discharge-summary", "radiology"),
            ),
            Param(
                "keyword",
                "string",
                "Section heading or words to look for (case-insensitive).",
                "要查找的段落标题或词语（不区分大小写）。",
                example="Discharge Instructions",
            ),
        ),
        documents.document_reference_search,
        aliases={"type": "type_code", "query": "keyword", "section": "keyword"},
        value_aliases={
            "type_code": {"discharge": "discharge-summary", "discharge_summary": "discharge-summary"},
        },
    ),
    Tool(
        "CarePlan.search",
        "ehr",
        "Search discharge care plans: discharge-planning (disposition, condition, instructions), followup "
        "(appointments) or treatment (discharge medications).",
        "检索出院照护计划：discharge-planning（出院去向、出院时状况、出院医嘱）、followup（随访安排）"
        "或 treatment（出院带药）。",
        (
            *SEARCH,
            Param(
                "category",
                "string",
                "Part of the plan; omit for discharge planning and follow-up.",
                "计划的组成部分；省略则返回出院计划和随访安排。",
                enum=("discharge-planning", "followup", "treatment"),
            ),
        ),
        documents.care_plan_search,
        aliases={"type": "category"},
        value_aliases={
            "category": {"follow-up": "followup", "follow_up": "followup", "discharge": "discharge-planning"}
        },
    ),
    Tool(
        "Procedure.search",
        "ehr",
        "Search procedures performed (ICD procedure codes with titles and dates).",
        "检索已实施的操作/手术（ICD 操作编码、名称及日期）。",
        SEARCH,
        conditions.procedure_search,
    ),
    Tool(
        "AllergyIntolerance.search",
        "ehr",
        "List the patient's recorded allergies and intolerances.",
        "列出患者已记录的过敏及不耐受情况。",
        SEARCH,
        documents.allergy_intolerance_search,
    ),
)
