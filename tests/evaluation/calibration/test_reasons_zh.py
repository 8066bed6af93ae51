"""The agreement page in the Chinese UI: the rules judge's reasons and the codes in Chinese, an LLM judge's
reasons as the model wrote them and said to be so."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from annotations.templatetags import review_i18n as labels
from evaluation.calibration import services
from evaluation.models import TurnResult
from evaluation.templatetags import results_i18n as results_labels

pytestmark = pytest.mark.django_db

RULES_REASON = "none of “hyperkalemia”, “高钾血症” in the answer"
LLM_REASON = "The answer does not mention hyperkalemia."


def _reasons(run, text: str) -> None:
    for result in TurnResult.objects.filter(run=run):
        result.verdicts = [{**v, "reason": text} for v in result.verdicts]
        result.save(update_fields=["verdicts"])


def _disagree_everywhere(sample, grader) -> None:
    for item in sample.items.select_related("turn_result"):
        verdict = next(v for v in item.turn_result.verdicts if v["idx"] == item.item)
        label = "fail" if verdict["passed"] else "pass"
        services.save_grade(sample=sample, turn_result=item.turn_result, item=item.item, grader=grader, label=label)


def test_agreement_page_in_chinese(client, judged, physicians):
    _reasons(judged["rules"], RULES_REASON)
    _reasons(judged["llm"], LLM_REASON)
    sample = services.draw_sample(name="zh", run_ids=[judged["rules"].pk], per_stratum=2, seed=3)
    _disagree_everywhere(sample, physicians["adjudicator"])
    client.force_login(physicians["adjudicator"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    html = client.get(reverse("evaluation:calibration_agreement")).content.decode()
    with translation.override("zh-hans"):
        shown = results_labels.judge_reason(RULES_REASON)
        judge_label = labels.label_of(kind="judge", code="rules")
    assert re.search(r"[\u4e00-\u9fff]", shown) and shown != RULES_REASON
    rules_table = html.split('data-judge="rules"')[-1].split("</table>")[0]
    assert shown in rules_table and "in the answer" not in rules_table
    # The LLM judge's words are left as written, and the page says whose words they are.
    llm_section = html.split("<h3>llm:test</h3>")[1].split("</table>")[0]
    assert LLM_REASON in llm_section and 'class="muted reason-source"' in llm_section
    # Slices and their values as labels: no "language"/"en"/"non-safety" codes in the agreement table.
    table = html.split('id="agreement-table"')[1].split("</table>")[0]
    cells = re.findall(r"<td>([^<]*)</td>", table)
    assert judge_label in cells and not {"language", "task_type", "item", "en", "zh", "non-safety", "all"} & set(cells)
    grade = client.get(
        reverse(
            "evaluation:calibration_grade", kwargs={"pk": sample.pk, "turn_result": sample.items.first().turn_result_id}
        )
    ).content.decode()
    intro = grade.split('<p class="muted">')[1].split("</p>")[0]
    assert " · en · " not in intro and " · zh · " not in intro and ("英文" in intro or "中文" in intro)
