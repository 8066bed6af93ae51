"""The rules judge on compiled items in calibration: agreement with physicians and with LLM judges."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.calibration import services, stats
from evaluation.calibration.compiled import COMPILED_JUDGE
from tests.evaluation.calibration.conftest import make_run
from tests.evaluation.test_compiled_judge import compile_all


@pytest.mark.django_db
def test_agreement_includes_the_rules_judge_on_compiled_items(client, judged, physicians) -> None:
    compile_all()
    # A physician grades the LLM-judged answers; the rules verdicts on them are recomputed.
    llm = make_run(sessions=judged["sessions"], judge="llm:other", passed=lambda t, i, lang: i == 1)
    sample = services.draw_sample(name="c", run_ids=[llm.pk], per_stratum=100, seed=1)
    for ci in sample.items.all()[:6]:
        services.save_grade(
            sample=sample, turn_result=ci.turn_result, item=ci.item, grader=physicians["reviewer"], label="fail"
        )
    report = stats.agreement_report()
    judges = {j.judge: j for j in report.judges}
    assert COMPILED_JUDGE in judges and judges[COMPILED_JUDGE].overall.n > 0
    # The stored answers ("ANSWER …") state no value: value items fail, "does not recommend" items pass.
    rows = stats.judge_pair_rows(report)
    assert {r[1] for r in rows} >= {"llm:other", "llm:test"} and all(r[0] == COMPILED_JUDGE for r in rows)
    only = stats.agreement_report(judge=COMPILED_JUDGE)
    assert [j.judge for j in only.judges] == [COMPILED_JUDGE]

    out = StringIO()
    call_command("judge_agreement", stdout=out)
    text = out.getvalue()
    assert COMPILED_JUDGE in text and "Rules judge on compiled items vs other judges" in text
    client.force_login(physicians["adjudicator"])
    page = client.get(reverse("evaluation:calibration_agreement"))
    assert page.status_code == 200 and 'id="judge-pairs"' in page.text and COMPILED_JUDGE in page.text


@pytest.mark.django_db
def test_generator_checked_items_are_compiled_from_their_wording_for_certification(judged, physicians) -> None:
    """A generated set's items carry the generator's check, so the compiler stores no suggestion on them; the
    compiled judge is still what scores an official record (no generator checks), so calibration compiles their
    wording and certifies it on the same physician grades (the demo's figures in docs/model-developers.md)."""
    from evaluation.calibration import certification, compiled
    from evaluation.models import TurnResult
    from scenarios.models import RubricItem

    checked = RubricItem.objects.filter(machine_check__isnull=False, compiled_state="")
    assert checked.exists() and not RubricItem.objects.exclude(compiled_state="").exists()
    results = list(TurnResult.objects.filter(run=judged["rules"]))
    assert compiled.verdicts_for(results) == {}
    ours = compiled.verdicts_for(results, compile_checked=True)
    assert ours and all(v["scored"] and v["reason"] for v in ours.values())
    # Nothing was stored: calibration measures the compiler, it does not suggest.
    assert not RubricItem.objects.exclude(compiled_state="").exists()

    sample = services.draw_sample(name="g", run_ids=[judged["rules"].pk], per_stratum=100, seed=1)
    graded = [ci for ci in sample.items.select_related("turn_result") if (ci.turn_result.pk, ci.item) in ours]
    assert graded
    for ci in graded:
        label = "pass" if ours[(ci.turn_result.pk, ci.item)]["passed"] else "fail"
        services.save_grade(
            sample=sample, turn_result=ci.turn_result, item=ci.item, grader=physicians["reviewer"], label=label
        )
    certs = {c.judge: c for c in certification.certify_judges(threshold=0.0)}
    assert certs[COMPILED_JUDGE].n == len(graded)
    # The grades copy the compiled verdicts: full agreement wherever both classes occur.
    assert certs[COMPILED_JUDGE].tpr in (1.0, None) and certs[COMPILED_JUDGE].tnr in (1.0, None)
