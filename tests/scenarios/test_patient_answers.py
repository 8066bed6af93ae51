"""Patient-tool answers: persona voice, EN/ZH parity, grounding in the record, the responder."""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest

from ehr import glossary
from ehr import models as m
from ehr.fhir import ToolContext, execute_tool, register_patient_responder
from scenarios.patient import (
    PATIENT_TOOLS,
    HealthMemory,
    Persona,
    answer_patient_tool,
    build_memory,
    check_answer,
    choose_persona,
    make_patient_responder,
    public_view,
)

NUMBER = re.compile(r"\d+(?:\.\d+)?")
# The released contract's arguments (query, drug; the other three tools take none), then names of calls
# stored before it (symptom, medication, topic, domain, location), which the patient still reads.
ARGUMENTS = {
    "patient.get_symptom_history": [
        {},
        {"query": "chest pain"},
        {"query": "胸痛"},
        {"query": "headache"},
        {"query": "What symptoms brought you to the hospital?"},
        {"symptom": "chest pain"},
    ],
    "patient.get_medication_adherence": [{}, {"drug": "warfarin"}, {"drug": "digoxin"}, {"medication": "warfarin"}],
    "patient.get_social_history": [{}, {"topic": "smoking"}, {"topic": "alcohol"}, {"topic": "occupation"}],
    "patient.get_functional_status": [{}, {"domain": "mobility"}, {"domain": "falls"}],
    "patient.get_pain_assessment": [{}, {"location": "chest"}],
}


def _persona(**fields: str) -> Persona:
    base = {"health_literacy": "medium", "adherence": "good", "anxiety_level": "low", "info_completeness": "full"}
    return Persona(**{**base, **fields}, seed="t")


def _memories(limit: int | None = None) -> list[HealthMemory]:
    notes = list(m.DischargeNote.objects.order_by("note_id"))[:limit]
    return [build_memory(subject_id=n.subject_id, hadm_id=n.hadm_id, current_date=_note_visible(n)) for n in notes]


def _note_visible(note: m.DischargeNote) -> dt.date:
    """The first current date that shows the note: visible iff charted before 00:00 of the current date."""
    return note.charttime.date() + dt.timedelta(days=1)


def _numbers(text: str) -> list[str]:
    return sorted(NUMBER.findall(text))


def test_every_answer_is_grounded_and_en_zh_carry_the_same_facts_and_numbers(demo_cohort):
    personas = [
        _persona(health_literacy=lit, anxiety_level=anx, info_completeness=comp)
        for lit, anx, comp in itertools.product(("low", "high"), ("low", "high"), ("full", "partial"))
    ]
    checked = 0
    for memory in _memories():
        for persona in personas:
            for tool, variants in ARGUMENTS.items():
                for args in variants:
                    en = answer_patient_tool(tool=tool, arguments=args, memory=memory, persona=persona, language="en")
                    zh = answer_patient_tool(tool=tool, arguments=args, memory=memory, persona=persona, language="zh")
                    assert en["facts"] == zh["facts"]
                    assert _numbers(en["answer"]) == _numbers(_without_drug_names(zh["answer"]))
                    assert check_answer(answer=en, memory=memory) == [], en
                    assert check_answer(answer=zh, memory=memory) == [], zh
                    assert re.search(r"[\u4e00-\u9fff]", zh["answer"]) and en["answer"].isascii()
                    # The lexicon covers every phrase of the synthetic cohort: nothing quoted untranslated.
                    assert "「" not in zh["answer"], zh["answer"]
                    checked += 1
    assert checked > 1000


def _without_drug_names(text: str) -> str:
    """Drop Chinese drug names: some carry a digit of their own (维生素K1 for phytonadione)."""
    for english, name in glossary.terms(kind="drug").items():
        if set(NUMBER.findall(name)) - set(NUMBER.findall(english)):
            text = text.replace(name, " ")
    return text


def test_a_drug_the_patient_is_not_on_is_never_claimed(demo_cohort):
    for memory in _memories():
        listed = " ".join(f.evidence for f in memory.facts).casefold()
        if "digoxin" in listed:
            continue
        for lang in ("en", "zh"):
            answer = answer_patient_tool(
                tool="patient.get_medication_adherence",
                arguments={"drug": "digoxin"},
                memory=memory,
                persona=_persona(),
                language=lang,
            )
            assert answer["facts"] == []
            assert "digoxin" not in answer["answer"].casefold() and "地高辛" not in answer["answer"]
            assert "not one of the medicines" in answer["answer"] or "没有在用" in answer["answer"]


def test_a_symptom_not_in_the_record_is_not_described(demo_cohort):
    for memory in _memories(10):
        text = " ".join(f.evidence for f in memory.facts).casefold()
        if "headache" in text:
            continue
        answer = answer_patient_tool(
            tool="patient.get_symptom_history",
            arguments={"query": "headache"},
            memory=memory,
            persona=_persona(),
            language="en",
        )
        assert answer["facts"] == [] and "headache" not in answer["answer"].casefold()


def test_low_and_high_literacy_word_things_differently(demo_cohort):
    differ = 0
    for memory in _memories(10):
        for tool in PATIENT_TOOLS:
            for lang in ("en", "zh"):
                low, high = (
                    answer_patient_tool(
                        tool=tool, arguments={}, memory=memory, persona=_persona(health_literacy=lit), language=lang
                    )
                    for lit in ("low", "high")
                )
                assert low["facts"] == high["facts"]
                if low["facts"]:
                    assert low["answer"] != high["answer"]
                    differ += 1
    assert differ > 10
    # Lay words: the low-literacy patient says "shortness of breath" where the note says "dyspnea".
    for memory in _memories():
        if any("dyspnea" in f.value for f in memory.of("symptom")):
            args = {"tool": "patient.get_symptom_history", "arguments": {}, "memory": memory}
            low = answer_patient_tool(**args, persona=_persona(health_literacy="low"), language="en")
            high = answer_patient_tool(**args, persona=_persona(health_literacy="high"), language="en")
            assert "dyspnea" in high["answer"] and "dyspnea" not in low["answer"]
            assert "shortness of breath" in low["answer"]
            low_zh = answer_patient_tool(**args, persona=_persona(health_literacy="low"), language="zh")
            high_zh = answer_patient_tool(**args, persona=_persona(health_literacy="high"), language="zh")
            assert "呼吸困难" in high_zh["answer"] and "喘不上气" in low_zh["answer"]
            break
    else:
        pytest.fail("no HPI mentions dyspnea")


def test_anxiety_and_partial_completeness_shape_the_answer(demo_cohort):
    memory = _memories(1)[0]
    args = {"tool": "patient.get_symptom_history", "arguments": {}, "memory": memory, "language": "en"}
    calm = answer_patient_tool(**args, persona=_persona())
    worried = answer_patient_tool(**args, persona=_persona(anxiety_level="high"))
    partial = answer_patient_tool(**args, persona=_persona(info_completeness="partial"))
    assert worried["facts"] == calm["facts"] and len(worried["answer"]) > len(calm["answer"])
    assert set(partial["facts"]) < set(calm["facts"])
    # Deterministic: same inputs, same answer.
    assert answer_patient_tool(**args, persona=_persona(anxiety_level="high")) == worried


def test_unknown_tool_is_refused(demo_cohort):
    with pytest.raises(ValueError, match="not a patient tool"):
        answer_patient_tool(
            tool="Observation.search", arguments={}, memory=_memories(1)[0], persona=_persona(), language="en"
        )


def test_responder_through_the_tool_registry(demo_cohort):
    note = m.DischargeNote.objects.order_by("note_id").first()
    context = ToolContext(
        current_date=_note_visible(note), subject_id=note.subject_id, hadm_id=note.hadm_id, session_id="s-1"
    )
    args = {"subject_id": note.subject_id, "session_id": "s-1"}
    register_patient_responder(make_patient_responder())
    try:
        social = execute_tool(name="patient.get_social_history", arguments=args, context=context)
        # The contract gives social history no question: an old `question` is dropped, with a warning.
        asked = execute_tool(
            name="patient.get_social_history", arguments={**args, "question": "您抽烟吗？"}, context=context
        )
        en = execute_tool(
            name="patient.get_symptom_history",
            arguments={**args, "query": "What symptoms brought you to the hospital?"},
            context=context,
        )
        zh = execute_tool(
            name="patient.get_symptom_history", arguments={**args, "query": "您有哪些症状？"}, context=context
        )
        old = execute_tool(
            name="patient.get_symptom_history", arguments={**args, "symptom": "您有哪些症状？"}, context=context
        )
    finally:
        register_patient_responder(None)
    assert social["language"] == "en" and social["facts"] and "warnings" not in social
    assert asked["warnings"] and asked["facts"] == social["facts"]
    assert en["language"] == "en" and en["facts"] and "warnings" not in en
    assert zh["language"] == "zh" and zh["facts"] == en["facts"]
    assert old == zh  # the tool layer maps the old name `symptom` to `query`
    assert public_view(social) == {"resourceType": "PatientAnswer", "language": "en", "answer": social["answer"]}


def test_contract_names_and_old_names_select_the_same_facts(demo_cohort):
    persona = _persona()
    pairs = [
        ("patient.get_symptom_history", {"query": "chest pain"}, {"symptom": "chest pain"}),
        ("patient.get_symptom_history", {"query": "shortness of breath"}, {"question": "shortness of breath"}),
        ("patient.get_medication_adherence", {"drug": "warfarin"}, {"medication": "warfarin"}),
        ("patient.get_medication_adherence", {"drug": "furosemide"}, {"medication": "furosemide"}),
    ]
    for memory in _memories(12):
        for tool, new, old in pairs:
            a, b = (
                answer_patient_tool(tool=tool, arguments=args, memory=memory, persona=persona, language="en")
                for args in (new, old)
            )
            assert a["facts"] == b["facts"], (tool, new)
        # A general question is the whole history, as no query at all.
        everything, question = (
            answer_patient_tool(
                tool="patient.get_symptom_history", arguments=args, memory=memory, persona=persona, language="en"
            )
            for args in ({}, {"query": "What symptoms brought you to the hospital?"})
        )
        assert question["facts"] == everything["facts"]


def test_responder_uses_injected_memory_and_persona_without_the_database():
    stored = {
        "subject_id": 5,
        "hadm_id": 6,
        "current_date": "2150-01-02",
        "facts": [],
        "dropped": [],
    }
    calls = []

    def memory_lookup(*, context, subject_id):
        calls.append(subject_id)
        return HealthMemory.from_dict(stored)

    def persona_lookup(*, context, memory):
        return choose_persona(seed="fixed", memory=memory, overrides={"anxiety_level": "low"})

    respond = make_patient_responder(memory_lookup=memory_lookup, persona_lookup=persona_lookup)
    context = ToolContext(current_date=dt.date(2150, 1, 2), subject_id=5, hadm_id=6)
    first = respond(tool="patient.get_pain_assessment", arguments={"subject_id": 5}, context=context)
    again = respond(tool="patient.get_pain_assessment", arguments={"subject_id": 5}, context=context)
    assert first == again and first["facts"] == [] and calls == [5]
    assert first["answer"]
