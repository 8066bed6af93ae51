"""Grading screen (blind, HTMX saves, permissions), agreement page and the judge_agreement command."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations.templatetags import review_i18n as labels
from evaluation.calibration import services, stats
from evaluation.models import PhysicianGrade

pytestmark = pytest.mark.django_db


@pytest.fixture
def sample(judged):
    return services.draw_sample(name="cal", run_ids=[judged["rules"].pk], per_stratum=1, seed=2)


def _first(sample):
    return sample.items.select_related("turn_result").order_by("position").first()


def _grade_url(sample, item):
    return reverse("evaluation:calibration_grade", kwargs={"pk": sample.pk, "turn_result": item.turn_result_id})


def _save_url(sample, item):
    return reverse("evaluation:calibration_save", kwargs={"pk": sample.pk, "turn_result": item.turn_result_id})


def test_grading_screen_is_blind_to_the_judge(client, sample, physicians):
    item = _first(sample)
    client.force_login(physicians["reviewer"])
    html = client.get(_grade_url(sample, item)).content.decode()
    tr = item.turn_result
    assert tr.trace["request"] in html and tr.trace["answer"] in html and "CREAT-OBS" in html
    texts = {
        ("en", 0): "States creatinine 1.4 mg/dL",
        ("zh", 0): "指出肌酐 1.4 mg/dL",
        ("en", 1): "Does not recommend NSAIDs",
        ("zh", 1): "不建议使用非甾体抗炎药",
    }
    assert texts[(tr.language, item.item)] in html
    assert "JUDGE-REASON" not in html  # no verdict reason, of this or any judge
    assert "rules" not in html.split("<main>")[1] and "llm:test" not in html
    for verdict in tr.verdicts:
        assert verdict["reason"] not in html
    assert 'aria-pressed="true"' not in html.split("<main>")[1]  # nothing pre-selected: no verdict leaks as a default


def test_every_role_grades_and_only_their_own_grade_changes(client, sample, physicians):
    item = _first(sample)
    for role in ("reviewer", "adjudicator", "admin"):
        client.force_login(physicians[role])
        assert client.get(_grade_url(sample, item)).status_code == 200
        response = client.post(_save_url(sample, item), {"item": item.item, "label": "pass", "note": role})
        assert response.status_code == 200 and "banner-ok" in response.content.decode()
    client.force_login(physicians["reviewer"])
    client.post(_save_url(sample, item), {"item": item.item, "label": "fail"})
    grades = {g.grader.username: (g.label, g.note) for g in PhysicianGrade.objects.select_related("grader")}
    assert grades == {"rev1": ("fail", ""), "adj": ("pass", "adjudicator"), "boss": ("pass", "admin")}
    # The screen shows the grader's own grade only.
    html = client.get(_grade_url(sample, item)).content.decode()
    assert html.split("<main>")[1].count('aria-pressed="true"') == 1 and "adjudicator" not in html.split("<main>")[1]


def test_bad_grade_posts_answer_200_with_a_banner(client, sample, physicians, judged):
    item = _first(sample)
    client.force_login(physicians["reviewer"])
    response = client.post(_save_url(sample, item), {"item": item.item, "label": "maybe"})
    assert response.status_code == 200 and "banner-error" in response.content.decode()
    response = client.post(_save_url(sample, item), {"item": "x", "label": "pass"})
    assert response.status_code == 200 and "whole number" in response.content.decode()
    response = client.post(_save_url(sample, item), {"item": 7, "label": "pass"})
    assert "not in sample" in response.content.decode()
    assert not PhysicianGrade.objects.exists()
    outside = judged["llm"].turn_results.first()
    url = reverse("evaluation:calibration_save", kwargs={"pk": sample.pk, "turn_result": outside.pk})
    assert client.post(url, {"item": 0, "label": "pass"}).status_code == 404


def test_anonymous_goes_to_login_and_reviewers_cannot_draw(client, sample, physicians, judged):
    item = _first(sample)
    for url in (
        reverse("evaluation:calibration_index"),
        _grade_url(sample, item),
        reverse("evaluation:calibration_agreement"),
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert "/accounts/login/" in client.post(_save_url(sample, item), {"item": 0, "label": "pass"})["Location"]
    client.force_login(physicians["reviewer"])
    data = {"name": "new", "runs": [judged["rules"].pk], "per_stratum": 1}
    assert client.post(reverse("evaluation:calibration_draw"), data).status_code == 403
    client.force_login(physicians["adjudicator"])
    response = client.post(reverse("evaluation:calibration_draw"), data)
    assert response.status_code == 200 and "Sample new: 16 items." in response.content.decode()
    response = client.post(reverse("evaluation:calibration_draw"), {**data, "per_stratum": "x"})
    assert "banner-error" in response.content.decode()


def test_queue_moves_to_the_next_ungraded_answer(client, sample, physicians):
    client.force_login(physicians["reviewer"])
    next_url = reverse("evaluation:calibration_next", kwargs={"pk": sample.pk})
    seen = []
    for _ in range(100):
        response = client.get(next_url)
        if response.status_code == 200:
            assert "You have graded every item" in response.content.decode()
            break
        seen.append(response["Location"])
        tr_id = int(re.search(r"/answers/(\d+)/", response["Location"]).group(1))
        for item in sample.items.filter(turn_result_id=tr_id):
            client.post(_save_url(sample, item), {"item": item.item, "label": "pass"})
    assert len(seen) == len(set(seen)) == sample.items.values("turn_result").distinct().count()
    assert PhysicianGrade.objects.count() == sample.items.count()


def _page_rows(html):
    rows = re.findall(r'<tr class="agreement-row">(.*?)</tr>', html, re.S)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]


def _command_rows(out):
    lines = out.split("Judge vs physicians\n")[1].split("\n\n")[0].splitlines()[1:]
    return [re.split(r"\s{2,}", line.strip()) for line in lines]


def _labelled(row):
    """A command row (codes) as the page shows it: judge, slice and value as UI labels, figures as they are."""
    judge, dimension, value, *figures = row
    shown = labels.label_of(kind="judge", code=judge), labels.label_of(kind="dimension", code=dimension)
    return [*shown, labels.slice_value(value, dimension), *figures]


def test_page_figures_equal_the_commands(client, judged, physicians):
    sample = services.draw_sample(name="all", run_ids=[judged["rules"].pk], per_stratum=100, seed=1)
    for item in sample.items.select_related("turn_result"):
        verdict = next(v for v in item.turn_result.verdicts if v["idx"] == item.item)
        services.save_grade(
            sample=sample,
            turn_result=item.turn_result,
            item=item.item,
            grader=physicians["reviewer"],
            label="pass" if verdict["passed"] or item.item == 0 else "fail",
        )
    client.force_login(physicians["admin"])
    html = client.get(reverse("evaluation:calibration_agreement")).content.decode()
    out = StringIO()
    call_command("judge_agreement", stdout=out)
    page, command = _page_rows(html), _command_rows(out.getvalue())
    assert command == stats.table_rows(stats.agreement_report())
    # The page labels the codes the command prints (English UI here): the same rows, the same figures.
    assert page == [_labelled(r) for r in command]
    assert ["rules judge", "Language", "English"] in [r[:3] for r in page]
    # 3 judges (rules, llm:test, and the rules judge on the items' compiled wording) × (all, 2 languages, 4 task
    # types, safety/non-safety)
    assert len(page) == 3 * (1 + 2 + 4 + 2)
    assert "95.37" in html and "95.37" in out.getvalue()
    assert html.count("JUDGE-REASON-rules") == 8  # rules fails 8 non-safety items rev1 passed
    assert "/results/calibration/samples/" in html
    out = StringIO()
    call_command("judge_agreement", "--judge", "rules", "--run", str(judged["rules"].pk), stdout=out)
    assert _command_rows(out.getvalue()) == [r for r in command if r[0] == "rules"]
    filtered = client.get(reverse("evaluation:calibration_agreement"), {"judge": "rules"}).content.decode()
    assert _page_rows(filtered) == [_labelled(r) for r in command if r[0] == "rules"]


def test_reviewers_see_only_their_own_disagreements(client, judged, physicians):
    sample = services.draw_sample(name="one", run_ids=[judged["rules"].pk], per_stratum=1, seed=1)
    item = sample.items.select_related("turn_result").first()
    verdict = next(v for v in item.turn_result.verdicts if v["idx"] == item.item)
    label = "fail" if verdict["passed"] else "pass"
    services.save_grade(
        sample=sample, turn_result=item.turn_result, item=item.item, grader=physicians["admin"], label=label
    )
    client.force_login(physicians["reviewer"])
    assert verdict["reason"] not in client.get(reverse("evaluation:calibration_agreement")).content.decode()
    client.force_login(physicians["adjudicator"])
    assert verdict["reason"] in client.get(reverse("evaluation:calibration_agreement")).content.decode()


def test_command_errors_and_empty_state(judged):
    out = StringIO()
    call_command("judge_agreement", stdout=out)
    assert "No physician grades yet" in out.getvalue() and "/results/calibration/" in out.getvalue()
    with pytest.raises(CommandError, match=r"unknown judge 'nope'.*llm:test, rules"):
        call_command("judge_agreement", "--judge", "nope")
    with pytest.raises(CommandError, match="no evaluation run with id 999999"):
        call_command("judge_agreement", "--run", "999999")


def test_agreement_page_reports_bad_filters_with_a_banner(client, physicians, judged):
    client.force_login(physicians["reviewer"])
    response = client.get(reverse("evaluation:calibration_agreement"), {"judge": "nope"})
    assert response.status_code == 200 and "unknown judge" in response.content.decode()
    response = client.get(reverse("evaluation:calibration_agreement"), {"run": "abc"})
    assert response.status_code == 200 and "banner-error" in response.content.decode()
    assert "No physician grade can be compared" in response.content.decode()


def test_agreement_page_queries_do_not_grow_with_grades(client, judged, physicians):
    sample = services.draw_sample(name="all", run_ids=[judged["rules"].pk], per_stratum=100, seed=1)
    items = list(sample.items.select_related("turn_result"))
    client.force_login(physicians["adjudicator"])
    counts = []
    for chunk in (items[:4], items[4:]):
        for item in chunk:
            services.save_grade(
                sample=sample, turn_result=item.turn_result, item=item.item, grader=physicians["reviewer"], label="fail"
            )
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse("evaluation:calibration_agreement")).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
