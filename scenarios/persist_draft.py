"""Storing a generated draft: the session with its patient, turns, gold steps and rubric items.

Called by :func:`scenarios.services.generate_slot` inside its transaction; a draft is written whole or not at all.
"""

import datetime as dt
from typing import Any

from django.utils import timezone

from ehr.fhir import tool_schemas
from scenarios.generation.types import GenerationOutcome, SessionDraft, TurnDraft
from scenarios.gold_answer import apply_gold_answer
from scenarios.models import GenerationRun, GoldStep, RubricItem, Session, SessionStatus, Turn
from scenarios.patient import HealthMemory, Persona, answer_patient_tool, build_memory, choose_persona


def persist_draft(*, run: GenerationRun | None, index: int | None, outcome: GenerationOutcome) -> Session:
    """Store a draft with its turns, gold steps and rubric items. Call inside a transaction."""
    draft: SessionDraft = outcome.draft
    current = dt.date.fromisoformat(draft.current_date)
    memory = build_memory(subject_id=draft.subject_id, hadm_id=draft.hadm_id, current_date=current)
    persona = choose_persona(seed=draft.session_id, memory=memory)
    passed = outcome.status == "passed"
    gate_report: dict[str, Any] = {
        "attempts": outcome.attempts,
        "failures": [f.__dict__ for f in outcome.reasons],
        "tier_feature": draft.tier_feature,
    }
    if outcome.llm is not None:
        gate_report["llm"] = outcome.llm
    # The rules backend is a pure function of record and seed; stamping wall-clock time would make equal
    # seeds export different bytes. Its sessions carry the record time they are set at; the run keeps
    # when it actually ran (GenerationRun.created_at).
    generated_at = dt.datetime.combine(current, dt.time(), tzinfo=dt.UTC)
    if outcome.llm is not None:
        # LLM texts are not a function of the seed: the honest stamp is when they were written.
        generated_at = timezone.now()
    session = Session.objects.create(
        run=run,
        run_index=index,
        record_id=draft.session_id.removeprefix("physreview_"),
        session_id=draft.session_id,
        subject_id=draft.subject_id,
        hadm_id=draft.hadm_id,
        current_date=current,
        env_info=draft.env_info,
        scenario=draft.scenario,
        clinical_task_domain=draft.clinical_task_domain,
        tier=draft.tier,
        sequence_idx=draft.sequence_idx,
        tools=tool_schemas(language="en"),
        tools_zh=tool_schemas(language="zh"),
        session_plan=draft.session_plan,
        dep_graph=draft.dep_graph,
        persona=persona.to_dict(),
        patient_memory=memory.to_dict(),
        patient_agent_annotations=_patient_annotations(draft=draft, memory=memory, persona=persona),
        status=SessionStatus.DRAFT if passed else SessionStatus.REJECTED_BY_GATE,
        generated_at=generated_at,
        gate_report=gate_report,
    )
    for turn in draft.turns:
        _persist_turn(session=session, turn=turn, failures=[f for f in outcome.reasons if f.turn == turn.index])
    return session


def _persist_turn(*, session: Session, turn: TurnDraft, failures: list) -> None:
    row = Turn.objects.create(
        session=session,
        index=turn.index,
        task_type=turn.task_type,
        is_implicit=turn.is_implicit,
        subtype=turn.subtype,
        tool_source=turn.tool_source,
        workup_mode=turn.workup_mode,
        request_explicit_en=turn.request_explicit_en,
        request_implicit_en=turn.request_implicit_en,
        request_explicit_zh=turn.request_explicit_zh,
        request_implicit_zh=turn.request_implicit_zh,
        answer_en=turn.answer_en,
        answer_zh=turn.answer_zh,
        derivations=[d.__dict__ for d in turn.derivations],
        gate_report={"failures": [f.__dict__ for f in failures]},
    )
    steps = [
        GoldStep(
            turn=row,
            idx=s.idx,
            tool=s.tool,
            arguments=s.arguments,
            observation=s.observation,
            dependency_list=s.dependency_list,
        )
        for s in turn.steps
    ]
    # The one writer of the gold answer sets the prepare_to_answer observation from the answer.
    apply_gold_answer(turn=row, steps=steps, answer_en=turn.answer_en, answer_zh=turn.answer_zh)
    GoldStep.objects.bulk_create(steps)
    for idx, item in enumerate(turn.rubric):
        # save() validates the machine-checkable form (bulk_create would skip that).
        RubricItem(
            turn=row,
            idx=idx,
            text_en=item.text_en,
            text_zh=item.text_zh,
            is_safety=item.is_safety,
            machine_check=item.check,
        ).save()


def _patient_annotations(*, draft: SessionDraft, memory: HealthMemory, persona: Persona) -> list[dict[str, Any]]:
    """The gold patient answers in both languages, keyed by tool + arguments: what evaluation replays."""
    out = []
    for turn in draft.turns:
        for step in turn.steps:
            if not step.tool.startswith("patient."):
                continue
            args = {k: v for k, v in step.arguments.items() if k not in {"session_id", "subject_id"}}
            out.append(
                {
                    "turn": turn.index,
                    "tool": step.tool,
                    "arguments": args,
                    "answers": {
                        lang: answer_patient_tool(
                            tool=step.tool, arguments=args, memory=memory, persona=persona, language=lang
                        )
                        for lang in ("en", "zh")
                    },
                }
            )
    return out
