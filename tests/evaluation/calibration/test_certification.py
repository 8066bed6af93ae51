"""Judge certification: exact intervals, the certification rule, run-time records and Rogan–Gladen correction.

Known values: Clopper–Pearson intervals as printed by R's ``binom.test(x, n)$conf.int`` (and the classic
exact-binomial tables): x=8,n=10 → [0.4439, 0.9748]; x=0,n=10 → [0, 0.3085]; x=10,n=10 → [0.6915, 1];
x=50,n=100 → [0.3983, 0.6017]; x=95,n=100 → [0.8872, 0.9836]. Incomplete beta closed forms:
I_0.5(2, 3) = 11/16 (polynomial), I_x(½, ½) = (2/π)·asin(√x) (arcsine law).
"""

from __future__ import annotations

import math
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.calibration import certification, correction, services
from evaluation.calibration.exact import beta_quantile, clopper_pearson, regularized_beta
from evaluation.dataset import from_sessions
from evaluation.judges.rules import Verdict
from evaluation.models import EvalRun, JudgeCertification
from evaluation.services import rejudge_run
from scenarios.models import Session
from tests.evaluation.calibration.conftest import make_run, rules_passed
from tests.scenarios.factories import complete_session


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        (8, 10, 0.4439, 0.9748),
        (0, 10, 0.0, 0.3085),
        (10, 10, 0.6915, 1.0),
        (50, 100, 0.3983, 0.6017),
        (95, 100, 0.8872, 0.9836),
    ],
)
def test_clopper_pearson_matches_r_binom_test(x, n, low, high):
    got_low, got_high = clopper_pearson(successes=x, trials=n)
    assert got_low == pytest.approx(low, abs=5e-5) and got_high == pytest.approx(high, abs=5e-5)


def test_incomplete_beta_and_its_inverse_match_closed_forms():
    assert regularized_beta(0.5, 2, 3) == pytest.approx(11 / 16, abs=1e-12)
    for x in (0.01, 0.3, 0.77, 0.999):
        assert regularized_beta(x, 0.5, 0.5) == pytest.approx(2 / math.pi * math.asin(math.sqrt(x)), abs=1e-12)
    for x in (0.05, 0.3, 0.6):  # where Beta(3.5, 7)'s density is not vanishing (the inverse is well posed)
        assert beta_quantile(regularized_beta(x, 3.5, 7), 3.5, 7) == pytest.approx(x, abs=1e-10)
    assert math.isnan(clopper_pearson(successes=0, trials=0)[0])
    with pytest.raises(ValueError):
        clopper_pearson(successes=3, trials=2)


def test_rogan_gladen_formula_and_its_limits():
    # p_true = (p_obs + TNR − 1) / (TPR + TNR − 1): 0.62 observed with TPR 0.9, TNR 0.8 → 0.6.
    assert correction.rogan_gladen(0.62, tpr=0.9, tnr=0.8) == pytest.approx(0.6)
    assert correction.rogan_gladen(0.05, tpr=0.9, tnr=0.8) == 0.0  # clipped
    assert correction.rogan_gladen(0.5, tpr=0.5, tnr=0.5) is None  # no better than chance


class InvertedJudge:
    """A deliberately bad judge: the opposite of the (physician-confirmed) verdicts of the fixture."""

    name = "llm:inverted"

    def describe(self):
        return {"name": self.name, "prompt_hash": "bad0prompt0hash"}

    def judge(self, *, session, turn, language, trace):
        return [
            Verdict(item.idx, True, not rules_passed(turn.index, item.idx, language), "inverted", item.is_safety)
            for item in turn.rubric
        ]


@pytest.fixture
def graded(db, physicians):
    """Four sessions judged by the rules judge and an always-pass LLM judge; a physician grades every item
    of the rules run as the rules judge did (so the rules judge is right by construction)."""
    sessions = [complete_session() for _ in range(4)]
    rules = make_run(sessions=sessions, judge="rules", passed=rules_passed)
    make_run(sessions=sessions, judge="llm:test", passed=lambda t, i, lang: True, rejudge_of=rules)
    sample = services.draw_sample(name="all", run_ids=[rules.pk], per_stratum=100, seed=1)
    for ci in sample.items.select_related("turn_result"):
        tr = ci.turn_result
        label = "pass" if rules_passed(tr.turn_index, ci.item, tr.language) else "fail"
        services.save_grade(
            sample=sample, turn_result=tr, item=ci.item, grader=physicians["reviewer"], label=label, note=""
        )
    return {"sessions": sessions, "rules": rules, "sample": sample}


def test_a_right_judge_is_certified_and_an_always_pass_judge_is_not(graded):
    certs = {c.judge: c for c in certification.certify_judges()}
    rules, llm = certs["rules"], certs["llm:test"]
    assert rules.n == 64 and rules.n_positive + rules.n_negative == 64
    assert rules.tpr == rules.tnr == 1.0
    # 32 of 32 → exact lower bound (0.025)^(1/32) ≈ 0.891 ≥ 0.80.
    assert rules.tpr_low == pytest.approx(0.025 ** (1 / rules.n_positive), abs=1e-9)
    assert rules.certified and rules.threshold == 0.80
    assert llm.tpr == 1.0 and llm.tnr == 0.0 and not llm.certified
    # Unchanged grades: the stored certification is kept, not duplicated; a stricter threshold is a new row.
    again = certification.certify_judges()
    assert {c.pk for c in again} == {c.pk for c in certs.values()}
    strict = {c.judge: c for c in certification.certify_judges(threshold=0.95)}
    assert not strict["rules"].certified and strict["rules"].pk != rules.pk
    with pytest.raises(ValueError, match="between 0 and 1"):
        certification.certify_judges(threshold=1.5)


def test_inverted_judge_is_refused_and_its_run_is_marked(graded, client, physicians):
    """Acceptance: a deliberately bad judge (verdicts inverted) is refused certification; its run records it,
    and the run page and the leaderboard mark it as uncertified while the certified judge's run is not marked."""
    dataset = from_sessions(Session.objects.filter(pk__in=[s.pk for s in graded["sessions"]]))
    bad_first = rejudge_run(source=graded["rules"], judge=InvertedJudge(), dataset=dataset)
    assert bad_first.manifest["judge_certification"] == {
        "certified": False,
        "reason": "not calibrated",
        "judge": "llm:inverted",
        "prompt_hash": "bad0prompt0hash",
    }
    # Grade the inverted judge's answers too (they are the rules run's answers): now it has figures.
    certs = {c.judge: c for c in certification.certify_judges()}
    bad = certs["llm:inverted"]
    assert bad.prompt_hash == "bad0prompt0hash" and bad.tpr == 0.0 and bad.tnr == 0.0 and not bad.certified
    bad_run = rejudge_run(source=graded["rules"], judge=InvertedJudge(), dataset=dataset)
    bad_run.refresh_from_db()
    assert bad_run.judge_certified is False
    assert bad_run.manifest["judge_certification"]["certification_id"] == bad.pk

    good_run = EvalRun.objects.get(pk=graded["rules"].pk)
    EvalRun.objects.filter(pk=good_run.pk).update(judge_certified=True)
    client.force_login(physicians["admin"])
    page = client.get(reverse("evaluation:run", args=[bad_run.pk])).content.decode()
    assert 'data-judge-certified="no"' in page
    # TPR + TNR − 1 = −1: no correction is possible, and the page says so.
    assert 'id="judge-not-correctable"' in page
    good = client.get(reverse("evaluation:run", args=[good_run.pk])).content.decode()
    assert 'data-judge-certified="yes"' in good
    board = client.get(reverse("evaluation:leaderboard")).content.decode()
    marked = set(re.findall(r'data-uncertified-run="(\d+)"', board))
    assert str(bad_run.pk) in marked and str(good_run.pk) not in marked


def test_correction_of_a_certified_judge_and_command_agree_with_the_page(graded, client, physicians):
    certification.certify_judges()
    run = graded["rules"]
    cert = certification.current_certification(judge="rules", prompt_hash="")
    first = correction.correct_run(run=run, certification=cert)
    assert first == correction.correct_run(run=run, certification=cert)  # fixed seed
    en = {r.metric: r for r in next(c for c in first if c.language == "en").rates}
    # TPR = TNR = 1 in the point estimate: corrected equals observed; resampled rates stay ≤ 1 so the
    # interval brackets it.
    item = en["item_pass_rate"]
    assert item.corrected == pytest.approx(item.observed)
    assert item.low <= item.corrected <= item.high
    out = StringIO()
    call_command("certify_judges", "--runs", str(run.pk), "--quiet", stdout=out)
    text = out.getvalue()
    assert re.search(r"^rules\s+—\s+64\s+", text, re.M)
    row = next(line for line in text.splitlines() if line.strip().startswith("item_pass_rate"))
    cells = row.split()
    client.force_login(physicians["admin"])
    page = client.get(reverse("evaluation:run", args=[run.pk])).content.decode()
    assert f"{cells[3]} {cells[4]}" in page  # the command's interval, e.g. "[40.6, 59.4]", on the page
    agreement = client.get(reverse("evaluation:calibration_agreement")).content.decode()
    assert 'id="certifications"' in agreement and "0.891" in agreement


def test_command_rejects_bad_input_and_stores_nothing(graded):
    with pytest.raises(CommandError, match="unknown run"):
        call_command("certify_judges", "--runs", "99999")
    with pytest.raises(CommandError, match="comma-separated"):
        call_command("certify_judges", "--runs", "a,b")
    with pytest.raises(CommandError, match="between 0 and 1"):
        call_command("certify_judges", "--threshold", "2")
    with pytest.raises(CommandError, match="unknown judge"):
        call_command("certify_judges", "--judge", "nobody")
    assert not JudgeCertification.objects.exists()


def test_compiled_rules_judge_and_each_llm_prompt_hash_are_certified_apart(judged, physicians):
    """The issue asks for one certification per judge identity: rules, rules (compiled), each LLM judge + prompt
    hash. The same LLM judge name with a changed prompt is a different judge."""
    from evaluation.calibration.compiled import COMPILED_JUDGE
    from tests.evaluation.test_compiled_judge import compile_all

    compile_all()
    old = make_run(sessions=judged["sessions"], judge="llm:other", passed=lambda t, i, lang: i == 1)
    EvalRun.objects.filter(pk=old.pk).update(manifest={"judge": {"name": "llm:other", "prompt_hash": "aaa111"}})
    new = make_run(sessions=judged["sessions"], judge="llm:other", passed=lambda t, i, lang: True, rejudge_of=old)
    EvalRun.objects.filter(pk=new.pk).update(manifest={"judge": {"name": "llm:other", "prompt_hash": "bbb222"}})
    sample = services.draw_sample(name="c", run_ids=[old.pk], per_stratum=100, seed=1)
    for ci in sample.items.all():
        services.save_grade(
            sample=sample, turn_result=ci.turn_result, item=ci.item, grader=physicians["reviewer"], label="fail"
        )
    certs = {(c.judge, c.prompt_hash): c for c in certification.certify_judges()}
    assert (COMPILED_JUDGE, "") in certs and certs[(COMPILED_JUDGE, "")].n > 0
    a, b = certs[("llm:other", "aaa111")], certs[("llm:other", "bbb222")]
    # Every physician grade is "fail": no TPR (no positives), so nobody is certified; the TNRs differ by prompt.
    assert a.n_positive == 0 and a.tpr is None and not a.certified
    assert b.tnr == 0.0 and a.tnr > 0.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [("80%", "JUDGE_CERTIFICATION_THRESHOLD='80%' is not a number"), ("1.5", "must be between 0 and 1")],
)
def test_bad_threshold_setting_stops_start_up_with_its_name(value, expected, tmp_path):
    """Settings fail fast on bad values (DESIGN.md conventions)."""
    from tests.physreview.startup import run_python

    result = run_python(
        ["-c", "import django; django.setup()"], env={"JUDGE_CERTIFICATION_THRESHOLD": value}, var_dir=tmp_path
    )
    assert result.returncode != 0 and "ImproperlyConfigured" in result.stderr and expected in result.stderr
    ok = run_python(
        [
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print(s.JUDGE_CERTIFICATION_THRESHOLD)",
        ],
        env={"JUDGE_CERTIFICATION_THRESHOLD": "0.9"},
        var_dir=tmp_path,
    )
    assert ok.stdout.split()[-1] == "0.9"
