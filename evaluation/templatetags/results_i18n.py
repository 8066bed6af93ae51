"""Template filters of the results and calibration pages that know about judges (the review pages' filters,
in ``annotations.templatetags.review_i18n``, know nothing of runs: the review layer sits below evaluation)."""

from typing import Any

from django import template

from evaluation.judges import is_model_judge
from scenarios.rubric_reasons import display_reason

register = template.Library()


@register.filter
def judge_reason(reason: Any, judge: str | None = None) -> str:
    """A stored judge reason in the UI language (the harness's English shapes); other text as it is.

    ``judge`` named and a model: its reason is the model's own text, never reworded."""
    if is_model_judge(judge):
        return "" if reason is None else str(reason)
    return display_reason(reason)


@register.filter
def model_judge(name: str | None) -> bool:
    """``{% if run.judge|model_judge %}``: the judge's reasons are model text (the page says so)."""
    return is_model_judge(name)
