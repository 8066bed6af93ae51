"""Gate failure messages: stored in English as before, read back to their template and shown in the UI
language, with the field they name and what they found translated (issue 16: human labels in both UI
languages)."""

from __future__ import annotations

import copy
import re

import pytest
from django.utils import translation

from scenarios.gate_messages import FINDINGS, MESSAGES, WHERE, display_gate_message, gate_message, where
from scenarios.generation import check_session
from scenarios.generation.types import RubricItem, SessionDraft
from tests.scenarios.test_generation_sessions import outcome

CJK = re.compile(r"[\u4e00-\u9fff]")


def _draft(scenario: str, tier: int) -> SessionDraft:
    result = outcome(scenario, tier)
    assert result.status == "passed", result.reasons
    return copy.deepcopy(result.draft)


def _plant_defects(draft: SessionDraft) -> None:
    """One defect per gate or more, each in an otherwise passing draft's turns."""
    first, second, third, last = draft.turns
    first.answer_en += " The level is 987.6 mg/dL."  # numbers (and ZH lacks the number)
    first.rubric[0].text_zh = ""  # rubric lacks a text, Chinese text missing
    first.rubric.append(RubricItem(text_en="States the Insulin dose ? ", text_zh="说明 dose ?", check=None))
    first.subtype = "NA"  # turn 0 must be explicit
    second.answer_zh += " hold the drug, see {drug}"  # untranslated English, unfilled template field
    second.answer_en += " Done with ServiceRequest.create (simulated, id sim-req-abc1234)."  # machine text
    second.request_implicit_en = second.request_explicit_en  # implicit equals explicit
    second.steps[-1].tool = "Observation.search"  # the last step must be prepare_to_answer
    third.steps[0].arguments["not_a_parameter"] = 1  # not contract parameters
    third.steps[0].observation = {"error": "upstream said no"}  # returned an error
    third.subtype = None  # needs a subtype
    third.rubric.append(RubricItem(text_en="Mentions None", text_zh="提到", check={"kind": "nonsense"}))
    last.steps[0].tool = "Unknown.thing"  # unknown tool
    draft.sequence_idx = (draft.sequence_idx + 1) % 12  # arc does not match


@pytest.fixture
def failures(demo_cohort):
    found = []
    for scenario, tier in (("med_safety", 2), ("diagnostic_workup", 3)):
        draft = _draft(scenario, tier)
        _plant_defects(draft)
        found += check_session(draft)
    return found


def test_every_message_the_gates_write_is_read_back_and_shown_in_chinese(failures):
    gates = {f.gate for f in failures}
    assert {"numbers", "rubric", "translation", "subtype", "untranslated", "placeholder", "machine_text"} <= gates
    assert {"tool_count", "tool_contract", "tool_result", "tool_names", "arc"} <= gates
    for failure in failures:
        with translation.override("en"):
            english = display_gate_message(failure.message)
        with translation.override("zh-hans"):
            chinese = display_gate_message(failure.message)
        assert chinese != failure.message and CJK.search(chinese), failure
        assert not CJK.search(english) or CJK.search(failure.message), failure
        # Field names and template words are translated; the English words left are codes, tools or quotes.
        for phrase in ("rubric item", "explicit request", "implicit request", "not in any observation", "lacks"):
            assert phrase not in chinese, (failure.message, chinese)


def test_stored_text_is_what_the_gates_wrote_before():
    """The stored English is unchanged: generation reports and review warnings keep their bytes."""
    assert gate_message("zh_missing", where=where("rubric", n=2)) == "rubric item 2: Chinese text missing"
    assert (
        gate_message(
            "date_cutoff", where=where("step", idx=1, tool="Observation.search"), date="2150-01-02", today="2150-01-02"
        )
        == "step 1 Observation.search shows 2150-01-02 >= 2150-01-02"
    )
    assert gate_message("il_calls", kinds=["ehr", "write"]) == "IL needs exactly 1 EHR call, got ['ehr', 'write']"
    assert gate_message("placeholder", where=where("answer_zh"), what="none", snippet="x None") == (
        "answer (zh): 'None' in “x None”"
    )
    assert gate_message("self_rubric", where=where("rubric", n=3), text="Dose", lang="zh") == (
        "rubric item 3 (“Dose”): the zh gold answer fails its check"
    )


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("rubric item 2 (zh): Chinese text missing", "评分细则条目 2（中文）：缺少中文文本"),
        ("answer: 987.6 not in any observation", "标准答案：987.6 不见于任何工具返回结果"),
        (
            "IL needs exactly 1 EHR call, got ['ehr', 'write']",
            "信息查询（IL）须恰好调用 1 次病历工具，实际为：EHR 工具、写入工具",
        ),
        ("arc ('IL', 'DG', 'CR', 'WU') breaks the protocol", "会话主线 IL → DG → CR → WU 不符合协议"),
        (
            "rubric item 3 (“Dose”): the zh gold answer fails its check",
            "评分细则条目 3（“Dose”）：中文标准答案未通过该条检查",
        ),
        ("answer (zh): 'None' in “x None”", "标准答案（中文）：“x None”中含“None”值"),
    ],
)
def test_chinese_display(stored, shown):
    labels = {"ehr": "EHR 工具", "write": "写入工具"}
    with translation.override("zh-hans"):
        assert display_gate_message(stored, label=lambda *, kind, code: labels[code]) == shown


def test_english_display_reads_lists_as_words_and_leaves_unknown_text_as_it_is():
    with translation.override("en"):
        assert display_gate_message("L3 needs >= 3 resource types, got ['Condition', 'Observation']") == (
            "L3 needs >= 3 resource types, got Condition, Observation"
        )
        assert display_gate_message("the model said: no") == "the model said: no"
        assert display_gate_message(None) == ""


def test_templates_and_findings_are_distinct_and_each_reads_back_to_itself():
    from scenarios.gate_messages import parse_gate_message

    samples = {
        "where": "answer",
        "what": "none",
        "kinds": "['ehr']",
        "tools": "['X.y']",
        "types": "[]",
        "arc": "()",
        "lang": "zh",
    }
    for key, template in MESSAGES.items():
        names = re.findall(r"%\((\w+)\)s", template)
        text = gate_message(
            key, **{n: samples.get(n, "7" if n in ("idx", "sequence", "count", "low", "high") else "IL") for n in names}
        )
        assert parse_gate_message(text)[0] == key, (key, text)
    assert len(set(MESSAGES.values())) == len(MESSAGES)
    assert len(set(WHERE.values())) == len(WHERE) and len(set(FINDINGS.values())) == len(FINDINGS)
