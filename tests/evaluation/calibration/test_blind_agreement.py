"""Issue 36, F5: the calibration agreement page showed a reviewer another physician's name and grade (the
"between physicians" pairs) on items the grading screen hides. A reviewer's figures there are computed over
their own grades only: they do not move when another physician grades, and name nobody else."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.calibration import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(judged, physicians):
    """Two items of a sample; rev1 graded both, against the rules judge on the first."""
    sample = services.draw_sample(name="blind", run_ids=[judged["rules"].pk], per_stratum=1, seed=3)
    items = list(sample.items.select_related("turn_result").order_by("position")[:2])
    for item in items:
        verdict = next(v for v in item.turn_result.verdicts if v["idx"] == item.item)
        label = "fail" if verdict["passed"] else "pass"
        services.save_grade(
            sample=sample, turn_result=item.turn_result, item=item.item, grader=physicians["reviewer"], label=label
        )
    return sample, items


def _page(client, user) -> str:
    client.force_login(user)
    return client.get(reverse("evaluation:calibration_agreement")).content.decode().split("<main>", 1)[1]


def _grade(sample, item, grader, label: str) -> None:
    services.save_grade(sample=sample, turn_result=item.turn_result, item=item.item, grader=grader, label=label)


def test_another_physicians_grades_never_reach_a_reviewers_agreement_page(client, graded, physicians):
    sample, items = graded
    me, other = physicians["reviewer"], physicians["reviewer2"]
    before = _page(client, me)
    assert "rules" in before  # their own grades are compared with the judge
    # rev2 grades the same items (one each way) and a third one: nothing on rev1's page moves.
    _grade(sample, items[0], other, "pass")
    _grade(sample, items[1], other, "fail")
    third = sample.items.select_related("turn_result").order_by("position")[2]
    _grade(sample, third, other, "fail")
    after = _page(client, me)
    assert after == before
    assert other.username not in after and 'id="physician-pairs"' not in after
    # rev1's own grade does move their figures.
    _grade(sample, third, me, "pass")
    assert _page(client, me) != before


def test_adjudicators_see_the_agreement_between_physicians(client, graded, physicians):
    sample, items = graded
    _grade(sample, items[0], physicians["reviewer2"], "pass")
    page = _page(client, physicians["adjudicator"])
    assert 'id="physician-pairs"' in page and "rev1" in page and "rev2" in page
