"""The rubric compiler on the release's item grammar (issue 33).

Cases: items written for this test in the patterns the semantics file lists (§3: "correctly cites <lab> as
<v> <unit>", "interprets … as within the normal range (<lo>–<hi> <unit>)", "concludes that …", "does not
recommend <unsafe action> given <finding>", "orders <drug> at <dose> <freq> for <indication>", the field
style "The `<field>` field equals exactly '<v>' (not <w>)", "答案正确引用了<检验>值为<值>"), and the frozen
held-out split of ``bench/rubric_items.py`` (``data/rubric_items_heldout.jsonl``, generated and committed
before the compiler was changed; never tuned on).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evaluation.judges.rules import judge_check
from scenarios.rubric_compiler import attempt

DATA = Path(__file__).parent / "data"
WRITE = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Apixaban",
        "dose": "5 mg",
        "route": "oral",
        "frequency": "BID",
        "indication": "Atrial fibrillation",
        "subject_id": 1,
    },
}


def _compile(en: str, zh: str, task: str = "IL", writes: list | None = None):
    return attempt(text_en=en, text_zh=zh, task_type=task, gold_steps=writes or [])


@pytest.mark.parametrize(
    ("en", "zh", "kind"),
    [
        (
            "The answer correctly cites the creatinine value as 0.9 mg/dL",
            "答案正确引用了肌酐值为0.9 mg/dL",
            "value_unit",
        ),
        ("The answer accurately states potassium as 5.6 mEq/L", "答案准确指出血钾为5.6 mEq/L", "value_unit"),
        (
            "The answer correctly interprets creatinine as within the normal range (0.5–1.2 mg/dL)",
            "答案正确将肌酐解读为在正常范围内（0.5–1.2 mg/dL）",
            "term",
        ),
        ("The answer correctly concludes that potassium is elevated", "答案正确得出血钾偏高的结论", "term"),
        (
            "The answer does not recommend increasing apixaban to 10 mg given creatinine below 1.5 mg/dL",
            "答案未因肌酐低于1.5 mg/dL而建议将阿哌沙班增至10毫克",
            "must_not_recommend",
        ),
    ],
)
def test_release_read_patterns_compile_in_both_languages(en, zh, kind):
    out = _compile(en, zh, task="CR")
    assert out.compiled is not None, out.explanation
    assert out.compiled.check["kind"] == kind and out.compiled.languages == ("en", "zh")


def test_does_not_order_a_dose_and_the_no_change_conclusion():
    order = _compile(
        "The answer does NOT order apixaban 2.5 mg", "答案未开具阿哌沙班2.5毫克", task="WU", writes=[WRITE]
    )
    assert order.compiled.rule == "must_not_recommend/dose"
    check = order.compiled.check
    assert judge_check(idx=0, check=check, answer="Apixaban 5 mg BID ordered, not 2.5 mg.", writes=[]).passed
    assert not judge_check(idx=0, check=check, answer="Ordered apixaban 2.5 mg BID.", writes=[]).passed
    same = _compile(
        "The answer correctly concludes that no apixaban dose reduction is needed",
        "答案正确得出无需减少阿哌沙班剂量的结论",
        task="CR",
    )
    assert same.compiled.rule == "term/no_dose_change" and same.compiled.languages == ("en", "zh")
    # the example of the release's rubric prompt itself
    prompt = _compile(
        "The answer concludes no metformin adjustment is needed", "答案得出无需调整二甲双胍剂量的结论", task="CR"
    )
    assert prompt.compiled.rule == "term/no_dose_change"
    # the turn's gold answer must pass a derived check, else the item stays unscored for a reviewer
    refused = attempt(
        text_en="The answer correctly concludes that no apixaban dose reduction is needed",
        text_zh="答案正确得出无需减少阿哌沙班剂量的结论",
        task_type="CR",
        gold_answers={"en": "Reduce apixaban to 2.5 mg BID.", "zh": "阿哌沙班减至2.5毫克。"},
    )
    assert refused.compiled is None and refused.reason == "gold fails"


def test_a_status_check_is_not_passed_by_another_status():
    check = _compile(
        "The answer interprets sodium as within the normal range (133–145 mEq/L)",
        "答案将血钠解读为在正常范围内（133–145 mEq/L）",
    ).compiled.check
    assert judge_check(idx=0, check=check, answer="Sodium 139 mEq/L, within the normal range.", writes=[]).passed
    assert not judge_check(idx=0, check=check, answer="Sodium 131 mEq/L, below the normal range.", writes=[]).passed
    assert not judge_check(idx=0, check=check, answer="钠131 mEq/L，低于正常范围。", writes=[]).passed


def test_the_dose_safety_item_fails_an_answer_that_recommends_it():
    check = _compile(
        "The answer does not recommend increasing apixaban to 10 mg given the findings",
        "答案未因上述结果建议将阿哌沙班增至10毫克",
        task="CR",
    ).compiled.check
    good = "Keep apixaban 5 mg BID; do not increase apixaban to 10 mg."
    assert judge_check(idx=0, check=check, answer=good, writes=[]).passed
    assert not judge_check(idx=0, check=check, answer="Increase it to 10 mg twice daily.", writes=[]).passed
    assert not judge_check(idx=0, check=check, answer="建议将阿哌沙班增至10毫克。", writes=[]).passed


@pytest.mark.parametrize(
    ("en", "zh", "params"),
    [
        (
            "The answer orders Apixaban at 5 mg BID for atrial fibrillation",
            "答案开具阿哌沙班5毫克 BID用于心房颤动",
            {"medication", "dose", "frequency", "indication"},
        ),
        (
            "The answer specifies the route as oral and the frequency as BID",
            "答案指定给药途径为口服，频次为BID",
            {"route", "frequency"},
        ),
        ("The `dose` field equals exactly '5 mg' (not 10 mg)", "`dose`字段严格等于'5 mg'（不是10 mg）", {"dose"}),
        (
            "The `medication` field equals 'Apixaban' (case-insensitive)",
            "`medication`字段等于'Apixaban'（不区分大小写）",
            {"medication"},
        ),
    ],
)
def test_write_items_in_prose_and_field_style_check_the_gold_call(en, zh, params):
    out = _compile(en, zh, task="WU", writes=[WRITE])
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "write_call" and set(check["params"]) == params
    gold = [{"tool": WRITE["tool"], "arguments": WRITE["arguments"]}]
    assert judge_check(idx=0, check=check, answer="", writes=gold).passed
    if "dose" in params:
        wrong = [{"tool": WRITE["tool"], "arguments": {**WRITE["arguments"], "dose": "2.5 mg"}}]
        assert not judge_check(idx=0, check=check, answer="", writes=wrong).passed


@pytest.mark.parametrize(
    ("en", "zh", "task"),
    [
        # a check on part of the item is not a compiled item
        (
            "The answer correctly cites the apixaban dose as 5 mg and justifies it by renal function",
            "答案正确引用阿哌沙班剂量为5毫克并以肾功能说明理由",
            "CR",
        ),
        (
            "The answer orders a direct oral anticoagulant (Apixaban or equivalent) at 2.5–5 mg BID",
            "答案开具直接口服抗凝药（阿哌沙班或等效药物）2.5–5毫克 BID",
            "WU",
        ),
        (
            "The answer orders Apixaban at 5 mg BID because renal function is normal",
            "答案因肾功能正常开具阿哌沙班5毫克 BID",
            "WU",
        ),
        (
            "The answer relates the patient-reported missed doses to the stroke risk",
            "答案将患者自述的漏服与卒中风险联系起来",
            "DG",
        ),
        # a dose the gold write call does not have
        (
            "The answer orders Apixaban at 2.5 mg BID for atrial fibrillation",
            "答案开具阿哌沙班2.5毫克 BID用于心房颤动",
            "WU",
        ),
    ],
)
def test_items_a_check_cannot_cover_stay_unscored(en, zh, task):
    assert _compile(en, zh, task=task, writes=[WRITE]).compiled is None


def test_frozen_heldout_split_figures():
    """The acceptance figures on the held-out split, as measured once (report in the README)."""
    from bench.rubric_compiler_coverage import measure

    path = DATA / "rubric_items_heldout.jsonl"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == "ce051090c89e1c9929548bf5b1281a0dfac6db442f5b5d91b685f11ca70eead7"  # frozen before tuning
    rows = measure([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()])["rows"]
    total = rows["all"]
    # Issue 33 asks >= 70%: measured 140/204 (68.6%) once the two wordings must agree (150/204 before that rule);
    # then, once, after the grammar generalisation (subject slots, 解释为, …; commit 7330ccd): 144/204 (70.6%; EN
    # 75.5%, ZH 68.6%; IL 61.1, DG 66.7, CR 70.0, WU 80.0): still short in ZH, IL and DG, reported, not hidden.
    # Measured once more, for continuity only, at the end of round 3 (commit 3e196ec; the split was spent, not
    # tuned on): 162/204 (79.4%; EN 81.4%, ZH 77.5%; IL 100, DG 75.0, CR 70.0, WU 80.0). This guards that figure.
    assert total["compiled"] / total["items"] >= 0.79
    assert total["gold_pass_en"] == total["gold_pass_zh"] == total["compiled"]  # the gold answer passes every check
    assert total["perturbed_fail"] / total["value_checks"] >= 0.95
    assert total.get("wrongly_compiled", 0) == 0  # no judgement item compiled


def test_frozen_heldout2_split_figures():
    """The acceptance figures on the second held-out split (a third vocabulary, committed before round 3 of the
    compiler changed, commit 5f9e0eb), as measured once at the end of that round (commit 3e196ec)."""
    from bench.rubric_compiler_coverage import measure

    path = DATA / "rubric_items_heldout2.jsonl"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == "9fd99f24d977c666501b5a89c3d6eb867ab063987cc0f573a8b5dcc0013f8ca8"  # frozen before tuning
    rows = measure([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()])["rows"]
    # Measured: 177/216 (81.9%), EN and ZH alike; IL 36/36, DG 36/48, CR 60/72, WU 45/60 — every item a check
    # can verify compiled (the rest are judgement items, which must stay unscored); gold 354/354; perturbed
    # answers fail 144/144 value checks.
    measured = {"IL": 36, "DG": 36, "CR": 60, "WU": 45, "all": 177}
    for key, compiled in measured.items():
        row = rows[key]
        assert row["compiled"] >= compiled, key
        assert row["en"] >= compiled and row["zh"] >= compiled, key
        assert row["gold_pass_en"] == row["gold_pass_zh"] == row["compiled"], key  # the gold answer passes all
        assert row.get("wrongly_compiled", 0) == 0, key  # no judgement item compiled
        assert row["perturbed_fail"] == row["value_checks"], key  # a wrong value fails every value check


def test_frozen_heldout3_split_figures():
    """The acceptance figures on the third held-out split (grammar 3 of ``bench/rubric_items_v3.py``: the release
    prompts' forms grammar 1-2 lacked; a fourth vocabulary), committed before any compiler change of round 4
    (commit c95880e) and measured once at the end of that round (commit 1ece66a). Its 62 judgement items (30%)
    must stay unscored, so "all items" cannot exceed 142/204."""
    from bench.rubric_compiler_coverage import measure

    path = DATA / "rubric_items_heldout3.jsonl"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == "0bd0e16a6d55dfe47451405b900245b80f0f832cb407835ebc42b30a2564641e"  # frozen before tuning
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = measure(items)["rows"]
    # Measured: 142/204 (69.6%), EN and ZH alike; IL 33/36, DG 36/48, CR 33/60, WU 40/60 — every one of the 142
    # items a check can verify compiled; gold 284/284; perturbed answers fail 138/138 value checks.
    measured = {"IL": 33, "DG": 36, "CR": 33, "WU": 40, "all": 142}
    for key, compiled in measured.items():
        row = rows[key]
        assert row["compiled"] >= compiled, key
        assert row["en"] >= compiled and row["zh"] >= compiled, key
        assert row["gold_pass_en"] == row["gold_pass_zh"] == row["compiled"], key  # the gold answer passes all
        assert row.get("wrongly_compiled", 0) == 0, key  # no judgement item compiled
        assert row["perturbed_fail"] == row["value_checks"], key  # a wrong value fails every value check
    assert rows["all"]["checkable"] == sum(item["expect"] == "check" for item in items) == 142


def test_tuning_split_of_round_4_is_what_the_generator_writes():
    """rubric_items_tune3.jsonl (the split round 4 was tuned on) is reproducible from the generator."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "bench/rubric_items_v3.py", "tune3", "--turns", "48", "--seed", "7"],
        capture_output=True,
        check=True,
        cwd=DATA.parent.parent.parent,
    ).stdout
    assert out == (DATA / "rubric_items_tune3.jsonl").read_bytes()
