"""Builds a whole session draft from a plan with the rules backend: four turns, dep graph, env info."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from ehr.fhir import ToolContext
from scenarios.generation import turns_lookup as lookup
from scenarios.generation import turns_reason as reason
from scenarios.generation import turns_renal as renal
from scenarios.generation import turns_write as write
from scenarios.generation.common import Built, PatientAnswer, TurnContext
from scenarios.generation.planner import patient_age_sex
from scenarios.generation.templates import request
from scenarios.generation.types import SessionDraft, SessionPlan, Step, TurnDraft, TurnPlan

BUILDERS: dict[str, Callable[[TurnContext], Built]] = {
    "il_diagnoses": lookup.il_diagnoses,
    "il_med_order": lookup.il_med_order,
    "il_lab_latest": lookup.il_lab_latest,
    "il_discharge_meds": lookup.il_discharge_meds,
    "il_followup": lookup.il_followup,
    "dg_lab_panel": lookup.dg_lab_panel,
    "dg_drug_then_lab": lookup.dg_drug_then_lab,
    "dg_adherence": lookup.dg_adherence,
    "dg_patient_history": lookup.dg_patient_history,
    "dg_discharge_review": lookup.dg_discharge_review,
    "cr_ref_range": reason.cr_ref_range,
    "cr_trend": reason.cr_trend,
    "cr_threshold": reason.cr_threshold,
    "cr_crcl": renal.cr_crcl,
    "cr_interaction": reason.cr_interaction,
    "cr_renal_dosing": renal.cr_renal_dosing,
    "wu_hold_drug": write.wu_hold_drug,
    "wu_order_lab": write.wu_order_lab,
    "wu_flag": write.wu_flag,
}


def build_turn(
    *,
    plan: SessionPlan,
    turn: TurnPlan,
    earlier: list[TurnDraft],
    patient_answer: PatientAnswer,
    tool_context: ToolContext,
    age: int,
    sex: str,
) -> TurnDraft:
    t = TurnContext(
        plan=plan,
        turn=turn,
        tool_context=tool_context,
        patient_answer=patient_answer,
        earlier=earlier,
        age=age,
        sex=sex,
    )
    built = BUILDERS[turn.kind](t)
    # The last step closes information gathering; its observation is the gold answer (released format).
    # Every turn answers from its tool results, hence answer_type "tool" (the contract's other value is "chat").
    t.steps.append(
        Step(
            idx=len(t.steps),
            tool="prepare_to_answer",
            arguments={"answer_type": "tool"},
            observation=built.answer_en,
            dependency_list=[s.idx for s in t.steps],
        )
    )
    names = t.names()
    ex_en, ex_zh = request(turn.kind, "X", names)
    im_en, im_zh = request(turn.kind, turn.subtype, names) if turn.subtype else (ex_en, ex_zh)
    return TurnDraft(
        index=turn.turn,
        task_type=turn.task_type,
        kind=turn.kind,
        is_implicit=turn.subtype is not None,
        subtype=turn.subtype,
        tool_source=turn.tool_source,
        workup_mode=turn.workup_mode,
        topic=turn.topic,
        entity=turn.entity,
        request_explicit_en=ex_en,
        request_implicit_en=im_en,
        request_explicit_zh=ex_zh,
        request_implicit_zh=im_zh,
        answer_en=built.answer_en,
        answer_zh=built.answer_zh,
        steps=t.steps,
        rubric=built.rubric,
        derivations=built.derivations,
        entities=sorted({turn.entity, *[e for e in built.entities if e]}),
        facts=built.facts,
    )


def dep_graph(turns: list[TurnDraft]) -> dict:
    nodes = {
        str(d.index): {
            "task_type": d.task_type,
            "tool_source": d.tool_source,
            "subtype": d.subtype,
            "entities": d.entities,
            "facts": d.facts,
            "events": [s.tool for s in d.steps if s.tool != "prepare_to_answer"],
            "tool_calls": [{"tool": s.tool, "arguments": s.arguments} for s in d.steps],
        }
        for d in turns
    }
    edges = []
    for d in turns:
        for e in turns[: d.index]:
            shared = sorted(set(d.entities) & set(e.entities))
            if d.subtype == "NA" and d.entity in e.entities:
                edges.append({"from": e.index, "to": d.index, "type": "anaphora", "entity": d.entity})
            elif shared:
                edges.append({"from": e.index, "to": d.index, "type": "entity", "entity": shared[0]})
            elif d.subtype == "AE":
                edges.append({"from": e.index, "to": d.index, "type": "event", "entity": None})
    return {"nodes": nodes, "edges": edges}


def build_session(*, plan: SessionPlan, patient_answer: PatientAnswer) -> SessionDraft:
    ctx = ToolContext(
        current_date=dt.date.fromisoformat(plan.current_date),
        subject_id=plan.subject_id,
        hadm_id=plan.hadm_id,
        session_id=plan.session_id,
    )
    age, sex = patient_age_sex(subject_id=plan.subject_id, current_date=ctx.current_date)
    turns: list[TurnDraft] = []
    for turn in plan.turns:
        turns.append(
            build_turn(
                plan=plan,
                turn=turn,
                earlier=list(turns),
                patient_answer=patient_answer,
                tool_context=ctx,
                age=age,
                sex=sex,
            )
        )
    env_info = "\n".join(
        (
            f"session_id: {plan.session_id}",
            f"Current date: {plan.current_date}. Patient is {'an' if str(age).startswith(('8', '11', '18')) else 'a'} "
            f"{age}-year-old {sex}",
            f"Patient id (subject_id): {plan.subject_id}; current admission (hadm_id): {plan.hadm_id}",
        )
    )
    return SessionDraft(
        session_id=plan.session_id,
        subject_id=plan.subject_id,
        hadm_id=plan.hadm_id,
        current_date=plan.current_date,
        env_info=env_info,
        scenario=plan.scenario,
        clinical_task_domain=plan.clinical_task_domain,
        tier=plan.tier,
        sequence_idx=plan.sequence_idx,
        seed=plan.seed,
        index=plan.index,
        attempt=plan.attempt,
        tier_feature=plan.tier_feature,
        session_plan=plan.plan_text(),
        dep_graph=dep_graph(turns),
        turns=turns,
    )
