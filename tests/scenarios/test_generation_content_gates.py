"""Content gates (issue 16): placeholders, untranslated English in Chinese texts, machine strings in gold
answers, gold answers failing their own rubric; and the generator's texts pass them."""

from __future__ import annotations

import copy

import pytest

from evaluation.judges.rules import check_term, check_value_unit
from scenarios.generation import check_session
from scenarios.generation.gates_content import check_passes
from scenarios.generation.latin import untranslated_words
from scenarios.generation.types import SCENARIOS, TIERS, SessionDraft
from tests.scenarios.test_generation_sessions import outcome


def _draft(scenario: str = "med_safety", tier: int = 2) -> SessionDraft:
    result = outcome(scenario, tier)
    assert result.status == "passed", result.reasons
    return copy.deepcopy(result.draft)


def _failures(draft: SessionDraft, gate: str) -> list[str]:
    return [f.message for f in check_session(draft) if f.gate == gate]


@pytest.mark.parametrize(
    "text",
    [
        "States the Insulin dose ? ",
        "Dose: None",
        "Allergies: []",
        "Calls {...}",
        "Gives the {drug} dose",
        "TODO",
        "N/A",
    ],
)
def test_placeholder_in_a_rubric_item(demo_cohort, text):
    draft = _draft()
    draft.turns[1].rubric[0].text_en = text
    assert ["rubric item 1: " in m for m in _failures(draft, "placeholder")] == [True]


def test_placeholder_in_a_chinese_answer(demo_cohort):
    draft = _draft()
    draft.turns[0].answer_zh += "剂量 ？"
    assert _failures(draft, "placeholder") and _failures(draft, "placeholder")[0].startswith("answer (zh)")


def test_a_real_question_mark_is_not_a_placeholder(demo_cohort):
    draft = _draft()
    assert draft.turns[1].request_implicit_en.endswith("?") or draft.turns[1].request_explicit_en.endswith("?")
    assert _failures(draft, "placeholder") == []


@pytest.mark.parametrize(
    ("fragment", "words"),
    [
        ("紧急程度：routine。", ["routine"]),
        ("备注：follow-up of PTT 29.4 sec on 2160-11-07。", ["follow-up", "of", "on"]),
    ],
)
def test_english_fragment_in_a_chinese_text(demo_cohort, fragment, words):
    draft = _draft()
    draft.turns[2].answer_zh += fragment
    failures = _failures(draft, "untranslated")
    assert len(failures) == 1 and failures[0] == f"answer: English in the Chinese text: {' '.join(words)}"


def test_latin_words_chinese_clinical_text_keeps():
    kept = (
        "华法林（Warfarin）5 mg PO BID；国际标准化比值（INR）2.1；二甲双胍（格华止）（MetFORMIN (Glucophage)）；"
        "NT-proBNP 升高；用 Cockcroft-Gault 公式；调用 Flag.create；ICD 编码 J441；钾 5.1 mEq/L；"
        "随访（病历原文）：“Primary care (___) in 1 week.”"
    )
    assert untranslated_words(kept) == []
    assert untranslated_words("胰岛素 Sliding Scale per fingerstick") == ["Sliding", "Scale", "per", "fingerstick"]
    assert untranslated_words("English only, no Chinese") == []  # not a Chinese text: gate_translation's business


def test_machine_string_as_a_write_answer(demo_cohort):
    draft = _draft("med_safety", 3)
    turn = next(t for t in draft.turns if t.task_type == "WU")
    turn.answer_en = f"Done with {turn.steps[0].tool} (simulated, id sim-flag-9efe3bfae057): safety flag."
    failures = _failures(draft, "machine_text")
    assert any("names the tool" in m for m in failures)
    assert any("sim-flag-9efe3bfae057" in m for m in failures) and any("Done with" in m for m in failures)


def test_answer_omitting_what_its_rubric_checks(demo_cohort):
    draft = _draft("diagnostic_workup", 1)
    turn = draft.turns[0]  # coded diagnoses: the rubric checks the principal and a secondary diagnosis
    check = turn.rubric[1].check
    assert check["kind"] == "term"
    for phrase in [*check["en"], *check["zh"]]:
        turn.answer_en = turn.answer_en.replace(phrase, "")
        turn.answer_zh = turn.answer_zh.replace(phrase, "")
    failures = _failures(draft, "self_rubric")
    assert [m.split(":")[0] for m in failures] == [
        f"rubric item 2 (“{turn.rubric[1].text_en}”)",
        f"rubric item 2 (“{turn.rubric[1].text_en}”)",
    ]
    assert "en gold answer" in failures[0] and "zh gold answer" in failures[1]


@pytest.mark.parametrize(("scenario", "tier"), [(s, t) for s in SCENARIOS for t in TIERS])
def test_generated_texts_pass_the_content_gates_and_agree_with_the_rules_judge(demo_cohort, scenario, tier):
    draft = _draft(scenario, tier)
    assert check_session(draft) == []
    for turn in draft.turns:
        if turn.task_type == "WU":  # a physician-readable confirmation, no log line
            assert not any(turn.steps[0].tool in text for text in (turn.answer_en, turn.answer_zh))
            assert "sim-" not in turn.answer_en + turn.answer_zh
        for r in turn.rubric:
            if not r.check or r.check["kind"] not in ("term", "value_unit"):
                continue
            c = r.check
            for answer in (turn.answer_en, turn.answer_zh, "unrelated text 42"):
                # The gate restates the rules judge's checks: both must agree, pass or fail.
                if c["kind"] == "term":
                    judged = check_term(answer=answer, phrases=[*c["en"], *c["zh"]])[0]
                else:
                    judged = check_value_unit(
                        answer=answer, value=c["value"], unit=c["unit"], tolerance=c.get("tolerance", 0)
                    )[0]
                assert check_passes(check=c, answer=answer) == judged
