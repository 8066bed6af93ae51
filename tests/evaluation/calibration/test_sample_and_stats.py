"""Sampling (stratified, seeded, idempotent) and the agreement statistics (κ, bootstrap CI, slices)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from evaluation.calibration import services, stats
from evaluation.calibration.compiled import COMPILED_JUDGE
from evaluation.models import CalibrationItem, PhysicianGrade, TurnResult


def test_kappa_matches_a_hand_computed_example():
    judge = [True, True, True, False, False, True, False, True, True, False]
    physician = [True, True, False, False, False, True, True, True, True, False]
    # p_o = 8/10; both said pass 6 times: p_e = (6·6 + 4·4)/100 = 0.52; κ = (0.8 − 0.52)/(1 − 0.52) = 7/12.
    fig = stats.figure(judge, physician)
    assert fig.n == 10 and fig.percent == pytest.approx(0.8) and fig.kappa == pytest.approx(7 / 12)
    assert fig.cells() == ["10", "80.0", "0.583", fig.cells()[3]]
    assert fig.ci_low <= fig.kappa <= fig.ci_high


def test_bootstrap_interval_is_deterministic_for_a_seed():
    a = [i % 3 != 0 for i in range(40)]
    b = [i % 4 != 0 for i in range(40)]
    first = stats.bootstrap_kappa_ci(a, b, seed=5)
    assert first == stats.bootstrap_kappa_ci(a, b, seed=5)
    assert first != stats.bootstrap_kappa_ci(a, b, seed=6)
    low, high = first
    assert -1 <= low < stats.figure(a, b).kappa < high <= 1
    assert all(math.isnan(x) for x in stats.bootstrap_kappa_ci([True], [True]))


def test_sample_is_stratified_seeded_and_idempotent(judged):
    runs = [judged["rules"].pk]
    sample = services.draw_sample(name="s1", run_ids=runs, per_stratum=1, seed=3)
    strata = Counter(sample.items.values_list("stratum", flat=True))
    # 4 task types × 2 languages × rules verdict pass/fail, one item each.
    expected = {f"{t}/{lang}/{v}" for t in ("IL", "DG", "CR", "WU") for lang in ("en", "zh") for v in ("pass", "fail")}
    assert set(strata) == expected and set(strata.values()) == {1}
    for item in sample.items.select_related("turn_result"):
        task, language, verdict = item.stratum.split("/")
        tr = item.turn_result
        assert (tr.task_type, tr.language) == (task, language)
        assert next(v for v in tr.verdicts if v["idx"] == item.item)["passed"] == (verdict == "pass")
    units = list(sample.items.order_by("position").values_list("turn_result_id", "item"))
    assert services.draw_sample(name="s1", run_ids=runs, per_stratum=1, seed=3).pk == sample.pk
    assert CalibrationItem.objects.filter(sample=sample).count() == len(units)
    again = services.draw_sample(name="s2", run_ids=runs, per_stratum=1, seed=3)
    assert list(again.items.order_by("position").values_list("turn_result_id", "item")) == units
    other = services.draw_sample(name="s3", run_ids=runs, per_stratum=1, seed=4)
    assert set(other.items.values_list("turn_result_id", "item")) != set(units)
    with pytest.raises(services.CalibrationError, match="already exists"):
        services.draw_sample(name="s1", run_ids=runs, per_stratum=2, seed=3)


def test_sample_counts_an_answer_once_across_a_run_and_its_rejudge(judged):
    sample = services.draw_sample(name="both", run_ids=[judged["rules"].pk, judged["llm"].pk], per_stratum=100, seed=1)
    assert sample.items.count() == 32  # 2 sessions × 4 turns × 2 languages × 2 items, not twice that
    assert set(sample.items.values_list("turn_result__run_id", flat=True)) == {judged["rules"].pk}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": " "}, "needs a name"),
        ({"per_stratum": 0}, "between 1 and"),
        ({"run_ids": []}, "at least one"),
        ({"run_ids": [999999]}, "no evaluation run with id 999999"),
    ],
)
def test_bad_sample_parameters_are_refused(judged, kwargs, message):
    params = {"name": "x", "run_ids": [judged["rules"].pk], "per_stratum": 1, **kwargs}
    with pytest.raises(services.CalibrationError, match=message):
        services.draw_sample(**params)
    assert not CalibrationItem.objects.exists()


def _grade_all(sample, grader, passed):
    for item in sample.items.select_related("turn_result"):
        label = "pass" if passed(item.turn_result, item.item) else "fail"
        services.save_grade(sample=sample, turn_result=item.turn_result, item=item.item, grader=grader, label=label)


def test_report_per_judge_slices_and_physicians(judged, physicians):
    sample = services.draw_sample(name="all", run_ids=[judged["rules"].pk], per_stratum=100, seed=1)
    # rev1 agrees with the rules judge everywhere; rev2 fails every safety item.
    _grade_all(sample, physicians["reviewer"], lambda tr, i: next(v for v in tr.verdicts if v["idx"] == i)["passed"])
    _grade_all(sample, physicians["reviewer2"], lambda tr, i: i != 1)
    report = stats.agreement_report()
    by_judge = {j.judge: j for j in report.judges}
    # The rejudge's verdicts on the same answers count; the rules judge on the compiled wording is recomputed.
    assert set(by_judge) == {"rules", "llm:test", COMPILED_JUDGE}
    rules, llm = by_judge["rules"], by_judge["llm:test"]
    assert rules.overall.n == llm.overall.n == 64 and report.n_grades == 64
    assert rules.runs == [judged["rules"].pk] and llm.runs == [judged["llm"].pk]
    # rev1 = rules on 32; rev2 = rules on 16 (rules passes half the items of each kind).
    assert rules.overall.percent == pytest.approx(48 / 64)
    # llm passes everything: agrees with every pass grade (rev1: 16, rev2: 16 non-safety).
    assert llm.overall.percent == pytest.approx(32 / 64)
    assert set(rules.slices["language"]) == {"en", "zh"} and set(rules.slices["task_type"]) == {"IL", "DG", "CR", "WU"}
    assert rules.slices["item"]["safety"].n == 32
    assert llm.slices["item"]["non-safety"].percent == pytest.approx(24 / 32)  # rev1 16/32 pass, rev2 all
    assert len(rules.disagreements) == 16 and {c.grader for c in rules.disagreements} == {"rev2"}
    phys = report.physicians
    assert phys.n_units == 32 and phys.overall.percent == pytest.approx(0.5)
    assert [(p.rater_a, p.rater_b, p.n) for p in phys.pairs] == [("rev1", "rev2", 32)]
    only = stats.agreement_report(judge="llm:test")
    assert [j.judge for j in only.judges] == ["llm:test"]
    assert [j.judge for j in stats.agreement_report(run_id=judged["rules"].pk).judges] == ["rules", COMPILED_JUDGE]
    with pytest.raises(ValueError, match="unknown judge 'gpt'"):
        stats.agreement_report(judge="gpt")


def test_cant_tell_is_left_out_and_grades_are_per_grader(judged, physicians):
    sample = services.draw_sample(name="one", run_ids=[judged["rules"].pk], per_stratum=1, seed=1)
    item = sample.items.select_related("turn_result").first()
    tr = item.turn_result
    services.save_grade(sample=sample, turn_result=tr, item=item.item, grader=physicians["reviewer"], label="unsure")
    assert stats.agreement_report().n_grades == 0
    services.save_grade(sample=sample, turn_result=tr, item=item.item, grader=physicians["reviewer"], label="fail")
    services.save_grade(sample=sample, turn_result=tr, item=item.item, grader=physicians["admin"], label="pass")
    assert PhysicianGrade.objects.filter(turn_result=tr, item=item.item).count() == 2
    assert stats.agreement_report().n_grades == 2
    other = TurnResult.objects.exclude(pk__in=sample.items.values("turn_result")).first()
    with pytest.raises(services.CalibrationError, match="not in sample"):
        services.save_grade(sample=sample, turn_result=other, item=0, grader=physicians["admin"], label="pass")
    with pytest.raises(services.CalibrationError, match="unknown grade"):
        services.save_grade(sample=sample, turn_result=tr, item=item.item, grader=physicians["admin"], label="ok")
