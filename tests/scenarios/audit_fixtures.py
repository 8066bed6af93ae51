"""Sessions for the gold-audit tests: gold steps made by actually running the tools on the hand-built
record of :func:`tests.ehr.factories.build_record` (current date 2180-07-21), and the three defects the audit must find.

The clean session's answers and rubric items quote only what the observations hold, and its requests
state true premises (warfarin 5 mg, creatinine 2.0), so its audit is empty. :func:`add_defects`
then (a) edits one stored value (the 2179 creatinine 0.9 → 0.8, a value no answer quotes), (b) puts
a number no observation holds (6.3) into a gold answer, (c) makes the request state warfarin 2.5 mg.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ehr.fhir import ToolContext, execute_tool
from scenarios.models import GoldStep, RubricItem, Session, Turn
from tests.ehr.factories import Record, build_record
from tests.scenarios.factories import SessionFactory, TurnFactory

# Pinned (not the record's default): the texts below quote what is visible on this date.
CURRENT_DATE = dt.date(2180, 7, 21)


def context_for(session: Session, *, bounds: str = "strict") -> ToolContext:
    return ToolContext.for_session(session, bounds=bounds)


def run_step(turn: Turn, idx: int, tool: str, arguments: dict[str, Any], *, context: ToolContext) -> dict[str, Any]:
    """Run ``tool`` and store the call with what it returned, as the generator does."""
    observation = execute_tool(name=tool, arguments=arguments, context=context)
    GoldStep.objects.create(turn=turn, idx=idx, tool=tool, arguments=arguments, observation=observation)
    return observation


def _finish(turn: Turn, idx: int, rubric: list[tuple[str, str]]) -> None:
    GoldStep.objects.create(
        turn=turn,
        idx=idx,
        tool="prepare_to_answer",
        arguments={"answer_type": "chat"},
        observation=turn.answer_en,
        dependency_list=list(range(idx)),
    )
    for i, (en, zh) in enumerate(rubric):
        RubricItem.objects.create(turn=turn, idx=i, text_en=en, text_zh=zh)


def _turn(session: Session, index: int, **fields: Any) -> Turn:
    request = fields.pop("request")
    request_zh = fields.pop("request_zh")
    return TurnFactory(
        session=session,
        index=index,
        request_explicit_en=request,
        request_implicit_en=request,
        request_explicit_zh=request_zh,
        request_implicit_zh=request_zh,
        **fields,
    )


def clean_session(rec: Record | None = None, *, bounds: str = "strict", **session_fields: Any) -> Session:
    """Four turns over the record whose gold reproduces exactly (see the module docstring)."""
    rec = rec or build_record()
    s = rec.subject_id
    session_fields.setdefault("current_date", CURRENT_DATE)
    session = SessionFactory(
        subject_id=s,
        hadm_id=rec.current_hadm,
        env_info=f"Current date: {session_fields['current_date']}. Patient is a 62-year-old F\nsubject_id: {s}",
        **session_fields,
    )
    ctx = context_for(session, bounds=bounds)

    t0 = _turn(
        session,
        0,
        task_type="IL",
        request="What is the latest creatinine?",
        request_zh="最近一次肌酐是多少？",
        answer_en="Creatinine 2 mg/dL on 2180-07-20 23:30 (reference 0.5–1.2 mg/dL), up from 1.1 mg/dL on admission.",
        answer_zh="肌酐 2.0 mg/dL（2180-07-20 23:30，参考范围 0.5–1.2 mg/dL），入院时为 1.1 mg/dL。",
    )
    run_step(
        t0, 0, "Observation.search", {"subject_id": s, "category": "laboratory", "code": "creatinine"}, context=ctx
    )
    _finish(
        t0,
        1,
        [
            ("States creatinine 2 mg/dL", "指出肌酐 2 mg/dL"),
            ("Gives the date 2180-07-20", "给出日期 2180-07-20"),
            ("Says it is above the range", "说明高于参考范围"),
        ],
    )

    t1 = _turn(
        session,
        1,
        task_type="DG",
        tool_source="mixed",
        request="The patient is on warfarin 5 mg: check the order and the latest potassium.",
        request_zh="患者正在服用华法林 5 mg：核对医嘱和最近一次血钾。",
        answer_en="Warfarin 5 mg PO once a day (1 time per day), active. Potassium 5.9 mEq/L on 2180-07-19 06:00, "
        "above 3.3–5.1 mEq/L. The patient says they missed 2 doses.",
        answer_zh="华法林 5 mg 口服，每天 1 次，医嘱有效。血钾 5.9 mEq/L（2180-07-19 06:00），高于 3.3–5.1 mEq/L。"
        "患者说漏服了 2 次。",
    )
    run_step(t1, 0, "MedicationRequest.search", {"subject_id": s, "medication": "warfarin"}, context=ctx)
    run_step(t1, 1, "Observation.search", {"subject_id": s, "category": "laboratory", "code": "potassium"}, context=ctx)
    GoldStep.objects.create(
        turn=t1,
        idx=2,
        tool="patient.get_medication_adherence",
        arguments={"subject_id": s, "session_id": session.session_id, "drug": "warfarin"},
        observation={
            "resourceType": "PatientAnswer",
            "answer": "I missed 2 doses last week.",
            "answer_zh": "上周漏服了 2 次。",
        },
    )
    _finish(
        t1,
        3,
        [
            ("States warfarin 5 mg", "指出华法林 5 mg"),
            ("Reports potassium 5.9 mEq/L", "报告血钾 5.9 mEq/L"),
            ("Reports the missed doses", "报告漏服情况"),
            ("Flags the high potassium", "指出血钾偏高"),
        ],
    )

    t2 = _turn(
        session,
        2,
        task_type="CR",
        request="Creatinine was 2.0 yesterday: how much has it risen since admission, and what else is on file?",
        request_zh="昨天肌酐为 2.0：自入院以来升高了多少？还有哪些记录？",
        derivations=[
            {
                "name": "difference",
                "formula": "latest - first",
                "inputs": {"first": 1.1, "latest": 2.0},
                "constants": {},
                "result": 0.9,
                "unit": "mg/dL",
            }
        ],
        answer_en="Creatinine rose by 0.9 mg/dL (1.1 → 2 mg/dL). On file: acute kidney failure (N179), "
        "atrial fibrillation; age 62.",
        answer_zh="肌酐升高 0.9 mg/dL（1.1 → 2.0 mg/dL）。记录中有急性肾衰竭（N179）、心房颤动；年龄 62 岁。",
    )
    for idx, (tool, args) in enumerate(
        [
            ("Observation.search", {"subject_id": s, "code": "creatinine", "date_from": "2180-07-18"}),
            ("Patient.read", {"subject_id": s}),
            ("Encounter.search", {"subject_id": s}),
            ("Condition.search", {"subject_id": s, "hadm_id": rec.current_hadm}),
            ("Procedure.search", {"subject_id": s}),
            ("MedicationAdministration.search", {"subject_id": s, "medication": "warfarin"}),
            ("DocumentReference.search", {"subject_id": s, "type_code": "discharge-summary"}),
            ("DiagnosticReport.search", {"subject_id": s}),
            ("CarePlan.search", {"subject_id": s}),
            ("AllergyIntolerance.search", {"subject_id": s}),
            ("Observation.search", {"subject_id": s, "category": "vital-signs", "code": "heart rate"}),
            ("Observation.search", {"subject_id": s, "category": "microbiology"}),
        ]
    ):
        run_step(t2, idx, tool, args, context=ctx)
    _finish(
        t2,
        12,
        [
            ("Computes the rise of 0.9 mg/dL", "计算升高 0.9 mg/dL"),
            ("Uses 1.1 and 2 mg/dL", "使用 1.1 和 2 mg/dL"),
            ("Names acute kidney failure", "提及急性肾衰竭"),
            ("Uses age 62", "使用年龄 62"),
            ("Does not invent values", "不编造数值"),
        ],
    )

    t3 = _turn(
        session,
        3,
        task_type="WU",
        tool_source="write",
        request="Order a repeat creatinine for 2180-07-22.",
        request_zh="为 2180-07-22 开一次肌酐复查。",
        answer_en="Ordered a repeat creatinine, routine, for 2180-07-22 (simulated).",
        answer_zh="已开肌酐复查，routine，日期 2180-07-22（模拟）。",
    )
    run_step(
        t3,
        0,
        "ServiceRequest.create",
        {"subject_id": s, "service_type": "creatinine level", "priority": "routine", "target_date": "2180-07-22"},
        context=ctx,
    )
    _finish(
        t3,
        1,
        [
            ("Calls ServiceRequest.create", "调用 ServiceRequest.create"),
            ("Requests creatinine", "申请肌酐"),
            ("Schedules it for 2180-07-22", "安排在 2180-07-22"),
            ("Sets priority routine", "紧急程度 routine"),
            ("Does not order a drug", "不开药物医嘱"),
        ],
    )
    return session


def add_defects(session: Session) -> dict[str, Any]:
    """The three defects of the module docstring; returns what each one touched."""
    t0, t1 = session.turns.get(index=0), session.turns.get(index=1)
    step = t0.steps.get(idx=0)
    bundle = step.observation
    edited = next(e["resource"] for e in bundle["entry"] if e["resource"]["effectiveDateTime"].startswith("2179-"))
    assert edited["valueQuantity"]["value"] == 0.9
    edited["valueQuantity"]["value"] = 0.8  # (a)
    step.save(update_fields=["observation"])

    t1.answer_en += " Previous potassium 6.3 mEq/L."  # (b)
    t1.answer_zh += "此前血钾 6.3 mEq/L。"
    for form, text in (
        ("request_explicit_en", "The patient is on warfarin 2.5 mg: check the order and the latest potassium."),
        ("request_implicit_en", "The patient is on warfarin 2.5 mg: check the order and the latest potassium."),
        ("request_explicit_zh", "患者正在服用华法林 2.5 mg：核对医嘱和最近一次血钾。"),
        ("request_implicit_zh", "患者正在服用华法林 2.5 mg：核对医嘱和最近一次血钾。"),
    ):
        setattr(t1, form, text)  # (c)
    t1.save()
    return {"edited_resource": f"Observation/{edited['id']}", "turn_number": 1, "premise_turn": 1}
