"""Persona: deterministic from the seed, consistent with the record, critical fact withheld until asked."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ehr import models as m
from scenarios.patient import HealthMemory, Persona, answer_patient_tool, build_memory, check_answer, choose_persona
from scenarios.patient.lexicon import drug_zh
from scenarios.patient.persona import critical_candidates
from scenarios.patient.render import sentence

ADHERENCE = "patient.get_medication_adherence"


def _memories() -> list[HealthMemory]:
    notes = m.DischargeNote.objects.order_by("note_id")
    # The day after the note is charted: the first current date that shows it.
    return [
        build_memory(subject_id=n.subject_id, hadm_id=n.hadm_id, current_date=n.charttime.date() + dt.timedelta(days=1))
        for n in notes
    ]


def _with_drug_critical() -> tuple[HealthMemory, str]:
    """A memory whose most critical fact concerns one named drug, and that drug as written."""
    for memory in _memories():
        candidates = critical_candidates(memory)
        if candidates and candidates[0][0] <= 1:
            return memory, str(candidates[0][1].attrs["drugs"][0])
    pytest.skip("no admission with drug-specific non-adherence or an interacting drug")


def test_same_seed_same_persona_and_seeds_vary(demo_cohort):
    memory = _memories()[0]
    first = choose_persona(seed=7, memory=memory)
    assert choose_persona(seed=7, memory=memory) == first
    assert choose_persona(seed="7", memory=memory) == first
    drawn = [choose_persona(seed=s, memory=memory) for s in range(40)]
    for name in ("health_literacy", "anxiety_level", "info_completeness"):
        assert len({getattr(p, name) for p in drawn}) >= 2, name


def test_persona_json_round_trip_and_config(demo_cohort):
    memory, _ = _with_drug_critical()
    persona = choose_persona(seed=1, memory=memory, overrides={"info_completeness": "critical_withheld"})
    data = json.loads(json.dumps(persona.to_dict()))
    assert Persona.from_dict(data) == persona
    assert set(persona.persona_config()) == {"health_literacy", "adherence", "anxiety_level", "info_completeness"}
    with pytest.raises(ValueError, match="health_literacy"):
        Persona(health_literacy="expert", adherence="good", anxiety_level="low", info_completeness="full")


def test_adherence_follows_the_record(demo_cohort):
    for memory in _memories():
        facts = memory.of("adherence")
        persona = choose_persona(seed=3, memory=memory)
        if any(f.attrs.get("nonadherent") for f in facts):
            assert persona.adherence in ("partial", "poor")
        elif facts:
            assert persona.adherence == "good"


def test_critical_withheld_needs_a_critical_fact():
    empty = HealthMemory(subject_id=1, hadm_id=None, current_date="2100-01-01")
    persona = choose_persona(seed=1, memory=empty, overrides={"info_completeness": "critical_withheld"})
    assert persona.info_completeness == "partial"
    assert persona.critical_fact_id is None


def test_critical_fact_hidden_on_generic_questions_revealed_when_the_drug_is_named(demo_cohort):
    memory, drug = _with_drug_critical()
    persona = choose_persona(seed=5, memory=memory, overrides={"info_completeness": "critical_withheld"})
    critical = memory.by_id(persona.critical_fact_id)
    assert critical is not None and drug in critical.evidence
    for lang in ("en", "zh"):
        for tool, args in [
            (ADHERENCE, {}),
            (ADHERENCE, {"question": "How do you take your medicines?"}),  # as stored before the contract
            ("patient.get_symptom_history", {}),
            ("patient.get_symptom_history", {"query": "What symptoms brought you to the hospital?"}),
            ("patient.get_pain_assessment", {}),
        ]:
            answer = answer_patient_tool(tool=tool, arguments=args, memory=memory, persona=persona, language=lang)
            assert critical.id not in answer["facts"], (tool, answer)
            told = sentence(critical, language=lang, literacy=persona.health_literacy)
            assert told.rstrip("。.") not in answer["answer"]
            assert check_answer(answer=answer, memory=memory) == []
        hidden = answer_patient_tool(tool=ADHERENCE, arguments={}, memory=memory, persona=persona, language=lang)
        assert hidden["withheld"] is True
    named = answer_patient_tool(tool=ADHERENCE, arguments={"drug": drug}, memory=memory, persona=persona, language="en")
    assert critical.id in named["facts"] and named["withheld"] is False
    assert drug.casefold() in named["answer"].casefold()
    zh_name = drug_zh(drug)
    if zh_name:
        named_zh = answer_patient_tool(
            tool=ADHERENCE, arguments={"drug": zh_name}, memory=memory, persona=persona, language="zh"
        )
        assert critical.id in named_zh["facts"]
        assert zh_name in named_zh["answer"]
    # A full persona says it without being asked.
    full = Persona(**{**persona.persona_config(), "info_completeness": "full"})
    told = answer_patient_tool(tool=ADHERENCE, arguments={}, memory=memory, persona=full, language="en")
    assert critical.id in told["facts"]
