"""The rubric compiler on a release-shaped fixture of natural-language items (EN and ZH, four task types),
its patterns one by one, import_pab compiling official records, and the coverage command."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evaluation.agents.rules import NO_TOOLS_ANSWER
from evaluation.judges.rules import judge_check
from scenarios.models import CompiledState, RubricItem, Session
from scenarios.pab import import_pab_file, parse_record
from scenarios.rubric_compiler import COMPILER_VERSION, attempt, compile_item
from scenarios.rubric_compiler.services import attempt_parsed, compile_stored

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "pab_rubric_items.jsonl"


def _items():
    """(task type, rubric item, gold answers, gold writes, outcome) for every item of the fixture."""
    out = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        parsed = parse_record(json.loads(line))
        for turn in parsed.turns:
            writes = [{"tool": s.tool, "arguments": s.arguments} for s in turn.steps if s.tool.endswith(".create")]
            answers = {"en": turn.fields["answer_en"], "zh": turn.fields["answer_zh"]}
            for item in turn.rubric:
                outcome = attempt_parsed(item=item, turn=turn)
                out.append((turn.fields["task_type"], item, answers, writes, outcome))
    return out


def test_the_fixture_is_release_shaped_and_covers_four_task_types_in_both_languages() -> None:
    items = _items()
    assert len(items) >= 40
    assert {t for t, *_ in items} == {"IL", "DG", "CR", "WU"}
    assert all(item.text_en and item.text_zh for _t, item, *_ in items)
    raw = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert all("physreview" not in r for r in raw)  # official shape: no machine checks anywhere
    assert all(item.machine_check is None for _t, item, *_ in items)


def test_at_least_60_percent_compile_and_the_gold_answer_passes_98_percent() -> None:
    items = _items()
    compiled = [(t, item, answers, writes, o) for t, item, answers, writes, o in items if o.compiled]
    assert len(compiled) / len(items) >= 0.60
    judged = passed = 0
    for _t, _item, answers, writes, o in compiled:
        for lang in ("en", "zh"):
            verdict = judge_check(idx=0, check=o.compiled.check, answer=answers[lang], writes=writes)
            judged += 1
            passed += bool(verdict.passed)
    assert passed / judged >= 0.98
    # Every kind of check is represented.
    assert {o.compiled.check["kind"] for *_, o in compiled} == {
        "value_unit",
        "term",
        "write_call",
        "must_not_recommend",
    }


def test_a_no_tools_answer_fails_every_compiled_value_item() -> None:
    values = [o for *_, o in _items() if o.compiled and o.compiled.check["kind"] == "value_unit"]
    assert len(values) >= 6
    for o in values:
        for lang in ("en", "zh"):
            verdict = judge_check(idx=0, check=o.compiled.check, answer=NO_TOOLS_ANSWER[lang], writes=[])
            assert verdict.passed is False, o.compiled


def test_a_wrong_value_fails_and_the_right_one_passes_in_both_languages() -> None:
    compiled = compile_item(
        text_en="Cites the creatinine value as 0.9 mg/dL", text_zh="肌酐值为0.9 mg/dL", task_type="IL"
    )
    assert compiled is not None and compiled.rule == "value_unit" and compiled.languages == ("en", "zh")
    assert compiled.check["value"] == 0.9 and compiled.check["unit"] == "mg/dL"
    for answer, ok in (
        ("Creatinine was 0.8 mg/dL yesterday.", False),
        ("肌酐 0.8 mg/dL。", False),
        ("Creatinine was 0.9 mg/dL yesterday.", True),
        ("最近一次肌酐 0.90 mg/dL。", True),
    ):
        assert judge_check(idx=0, check=compiled.check, answer=answer, writes=[]).passed is ok, answer


def test_a_present_contraindicated_recommendation_fails() -> None:
    compiled = compile_item(text_en="Avoids NSAIDs", text_zh="避免使用非甾体抗炎药", task_type="CR")
    assert compiled is not None and compiled.check["kind"] == "must_not_recommend"
    bad = "For the knee pain she can take ibuprofen 400 mg as needed."
    good = "Avoid NSAIDs such as ibuprofen with apixaban; NSAIDs should be avoided because of bleeding."
    assert judge_check(idx=0, check=compiled.check, answer=bad, writes=[]).passed is False
    assert judge_check(idx=0, check=compiled.check, answer=good, writes=[]).passed is True
    assert judge_check(idx=0, check=compiled.check, answer="膝痛可加用布洛芬。", writes=[]).passed is False
    dose = compile_item(text_en="Does not recommend a dose reduction", text_zh="不建议减量", task_type="CR")
    assert dose is not None and "dose reduction" in dose.check["en"] and "减量" in dose.check["zh"]
    assert judge_check(idx=0, check=dose.check, answer="Reduce the dose to 2.5 mg BID.", writes=[]).passed is False
    assert judge_check(idx=0, check=dose.check, answer="A dose reduction is not needed.", writes=[]).passed is True


@pytest.mark.parametrize(
    ("en", "zh", "task", "kind", "expected"),
    [
        ("potassium 5.4 mEq/L", "", "IL", "value_unit", {"value": 5.4, "unit": "mEq/L"}),
        ("", "肌酐值为0.9 mg/dL", "IL", "value_unit", {"value": 0.9, "unit": "mg/dL"}),
        ("Uses age 68", "使用年龄 68", "CR", "value_unit", {"value": 68, "unit": ""}),
        (
            "Identifies the organism as E. coli",
            "识别病原体为大肠埃希菌",
            "DG",
            "term",
            {"zh": ["大肠埃希菌", "大肠杆菌"]},
        ),
        ("Mentions the date 2181-04-02", "提到日期 2181-04-02", "IL", "term", {"en": ["2181-04-02"]}),
        ("Does not recommend ampicillin", "不建议使用氨苄西林", "CR", "must_not_recommend", {}),
        ("Dose is hold", "剂量为暂停", "WU", "write_call", {"params": {"dose": "hold"}}),
        ("Route is PO", "途径为口服", "WU", "write_call", {"params": {"route": "PO"}}),
    ],
)
def test_patterns(en: str, zh: str, task: str, kind: str, expected: dict) -> None:
    gold = [{"tool": "MedicationRequest.create", "arguments": {"dose": "hold", "route": "PO", "medication": "x"}}]
    compiled = compile_item(text_en=en, text_zh=zh, task_type=task, gold_steps=gold)
    assert compiled is not None and compiled.check["kind"] == kind, (en, zh)
    for key, value in expected.items():
        assert compiled.check[key] == value if key != "zh" else set(value) <= set(compiled.check[key])


@pytest.mark.parametrize(
    ("en", "zh", "reason"),
    [
        ("Explains low cross-reactivity", "解释交叉过敏率低", "judgement"),
        ("Cites creatinine 1.1 to 1.6 mg/dL", "引用肌酐由 1.1 升至 1.6 mg/dL", "several values"),
        ("Reports oxycodone 5 mg PO", "报告口服羟考酮 5 mg", "partial"),
        ("Does not invent symptoms the patient did not report", "不编造患者未报告的症状", "negated conduct"),
        ("Gives the administration time", "给出给药时间", "no pattern"),
    ],
)
def test_what_cannot_be_checked_is_left_uncompiled(en: str, zh: str, reason: str) -> None:
    outcome = attempt(text_en=en, text_zh=zh, task_type="CR")
    assert outcome.compiled is None and outcome.reason == reason, outcome


def test_a_write_value_the_gold_call_contradicts_is_not_compiled() -> None:
    gold = [{"tool": "MedicationRequest.create", "arguments": {"dose": "hold", "route": "PO", "medication": "x"}}]
    outcome = attempt(text_en="Route is IV", text_zh="途径为静脉注射", task_type="WU", gold_steps=gold)
    assert outcome.compiled is None and outcome.reason == "conflict" and "'PO'" in outcome.explanation
    disagree = attempt(text_en="States potassium 5.8 mEq/L", text_zh="指出血钾 5.9 mEq/L", task_type="IL")
    assert disagree.compiled is None and disagree.reason == "languages disagree"


@pytest.mark.django_db
def test_import_pab_compiles_official_records_and_the_export_carries_it_back(tmp_path: Path) -> None:
    result = import_pab_file(path=FIXTURE)
    assert result.ok and result.coverage.n == 53 and result.coverage.rate >= 0.6
    items = RubricItem.objects.filter(turn__session__record_id="med_safety_901")
    first = items.get(turn__index=0, idx=0)
    assert first.machine_check is None and first.compiled_state == CompiledState.SUGGESTED
    assert first.compiled_check["kind"] == "value_unit" and first.compiled_version == COMPILER_VERSION
    assert first.scoring_check == first.compiled_check
    unscored = items.get(turn__index=1, idx=3)  # "Asks the patient about adherence"
    assert unscored.compiled_check is None and unscored.compiled_state == "" and "judgement" in unscored.compiled_note

    from scenarios.pab import export_pab

    out = export_pab(out=tmp_path / "out.jsonl").path
    lines = out.read_text(encoding="utf-8").splitlines()
    originals = {json.loads(line)["id"]: line for line in FIXTURE.read_text(encoding="utf-8").splitlines()}
    for line in lines:
        record = json.loads(line)
        original = json.loads(originals[record["id"]])
        assert {k: v for k, v in record.items() if k != "physreview"} == original  # release fields unchanged
        metas = [m for t in record["physreview"]["turns"] for m in t["rubric"]]
        assert any(m.get("compiled", {}).get("state") == "suggested" for m in metas)
    # Our own export re-imported keeps exactly its suggestions (no recompilation).
    Session.objects.all().delete()
    again = import_pab_file(path=out)
    assert again.ok and again.coverage.n == 0
    assert (
        RubricItem.objects.get(
            pk__isnull=False, turn__session__record_id="med_safety_901", turn__index=0, idx=0
        ).compiled_check
        == first.compiled_check
    )


@pytest.mark.django_db
def test_import_without_compiling_then_the_command_compiles_and_reports() -> None:
    call_command("import_pab", str(FIXTURE), "--quiet", "--no-compile")
    assert not RubricItem.objects.exclude(compiled_state="").exists()
    out = StringIO()
    call_command("compile_rubrics", "--all", "--quiet", stdout=out)
    text = out.getvalue()
    assert "rubric compiler: 39 of 53 item(s) compiled (73.6%)" in text, text
    assert "task type  items  compiled" in text and "WU " in text and "value_unit" in text
    assert "gold answer passes 78 of 78 compiled checks" in text
    assert RubricItem.objects.filter(compiled_state="suggested").count() == 39
    # A reviewer's decision is never overwritten, even with --force; a second run stores nothing new.
    item = RubricItem.objects.filter(compiled_state="suggested", turn__session__record_id="med_safety_901").first()
    item.compiled_state = CompiledState.REMOVED
    item.save()
    again = StringIO()
    call_command("compile_rubrics", "--session", "med_safety_901", "--force", "--quiet", stdout=again)
    assert "kept (reviewer decision) 1" in again.getvalue()
    item.refresh_from_db()
    assert item.compiled_state == CompiledState.REMOVED
    coverage = compile_stored(items=RubricItem.objects.all())
    assert coverage.stored["stored"] == 0


@pytest.mark.django_db
def test_compile_rubrics_refuses_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="choose what to compile"):
        call_command("compile_rubrics")
    with pytest.raises(CommandError, match="no stored session with record id nope"):
        call_command("compile_rubrics", "--session", "nope")
    with pytest.raises(CommandError, match="no such file"):
        call_command("compile_rubrics", "--file", str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad\.jsonl:1: not valid JSON"):
        call_command("compile_rubrics", "--file", str(bad))


def test_compile_rubrics_reports_on_a_file_without_a_database_write() -> None:
    out = StringIO()
    call_command("compile_rubrics", "--file", str(DATA / "pab_release_sample.jsonl"), "--quiet", stdout=out)
    assert "rubric compiler: " in out.getvalue() and "gold answer passes" in out.getvalue()
