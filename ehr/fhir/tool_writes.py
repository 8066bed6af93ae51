"""The simulated write tools (orders, service requests, flags): validated like the release's, never written to the
record."""

from __future__ import annotations

from ehr.fhir import writes
from ehr.fhir.params import Param, Tool
from ehr.fhir.tool_params import SUBJECT_ID

WRITE_TOOLS: tuple[Tool, ...] = (
    Tool(
        "MedicationRequest.create",
        "write",
        "Order a medication or a changed dose (simulated: nothing is written to the record).",
        "开具药物医嘱或调整剂量（模拟操作，不会写入病历）。",
        (
            SUBJECT_ID,
            Param(
                "medication",
                "string",
                "Drug name (e.g. 'apixaban').",
                "药品名称（如 'apixaban'）。",
                required=True,
                example="apixaban",
            ),
            Param(
                "dose",
                "string",
                "Dose with unit (e.g. '2.5 mg'); 'hold' to hold the drug.",
                "剂量及单位（如 '2.5 mg'）；暂停用药填 'hold'。",
                required=True,
                example="2.5 mg",
            ),
            Param(
                "route",
                "string",
                "Route (e.g. 'PO', 'IV', 'SC').",
                "给药途径（如 'PO'、'IV'、'SC'）。",
                required=True,
                example="PO",
            ),
            Param(
                "frequency",
                "string",
                "Frequency (e.g. 'BID', 'once daily').",
                "给药频次（如 'BID'、'once daily'）。",
                required=True,
                example="BID",
            ),
            Param("indication", "string", "Clinical reason.", "用药或调整的临床理由。"),
            Param("duration_days", "integer", "Planned duration in days.", "计划疗程（天）。", minimum=1, maximum=3650),
        ),
        writes.medication_request_create,
        aliases={"drug": "medication", "med": "medication", "reason": "indication"},
    ),
    Tool(
        "ServiceRequest.create",
        "write",
        "Request a test, imaging study, consultation, referral or procedure (simulated).",
        "申请检验、影像检查、会诊、转诊或操作（模拟操作）。",
        (
            SUBJECT_ID,
            Param(
                "service_type",
                "string",
                "What is requested (e.g. 'basic metabolic panel', 'cardiology consult').",
                "申请的项目（如 'basic metabolic panel'、'cardiology consult'）。",
                required=True,
                example="basic metabolic panel",
            ),
            Param(
                "priority",
                "string",
                "Urgency.",
                "紧急程度。",
                required=True,
                enum=("routine", "urgent", "asap"),
                example="routine",
            ),
            Param("note", "string", "Free-text note (e.g. the clinical reason).", "备注（如申请的临床理由）。"),
            Param(
                "target_date",
                "string",
                "When it should happen, YYYY-MM-DD (today or later).",
                "计划执行日期，格式 YYYY-MM-DD（当天或之后）。",
                format="date",
            ),
        ),
        writes.service_request_create,
        aliases={"code": "service_type", "occurrence_date": "target_date", "reason": "note"},
        value_aliases={"priority": {"stat": "asap"}},
    ),
    Tool(
        "Flag.create",
        "write",
        "Put an alert flag on the patient's record (e.g. bleeding risk, drug interaction) (simulated).",
        "在患者病历上添加警示标记（如出血风险、药物相互作用）（模拟操作）。",
        (
            SUBJECT_ID,
            Param(
                "category",
                "string",
                "Kind of flag.",
                "警示类别。",
                required=True,
                enum=("safety", "allergy", "administrative", "clinical"),
                example="safety",
            ),
            Param(
                "code",
                "string",
                "Short name of the alert (e.g. 'bleeding risk').",
                "警示的简短名称（如“出血风险”）。",
                required=True,
                example="bleeding risk",
            ),
            Param(
                "detail",
                "string",
                "The alert text (e.g. 'High bleeding risk: INR 4.2 on warfarin').",
                "警示内容（如“出血风险高：服用华法林，INR 4.2”）。",
                required=True,
            ),
        ),
        writes.flag_create,
        aliases={"note": "detail", "description": "detail", "text": "detail"},
        value_aliases={
            "category": {
                "drug": "safety",
                "lab": "clinical",
                "behavioral": "clinical",
                "diet": "clinical",
                "admin": "administrative",
            }
        },
    ),
)
