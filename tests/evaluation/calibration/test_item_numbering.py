"""Calibration items carry one number (issue 35, polish: the grading screen showed "1. 6." — the list's own
counter and the rubric item's number). Case: an answer of which only rubric item 2 was drawn."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluation.models import CalibrationItem, CalibrationSample

pytestmark = pytest.mark.django_db


def test_each_item_shows_its_rubric_number_once(client, judged, physicians):
    result = judged["rules"].turn_results.order_by("pk").first()
    sample = CalibrationSample.objects.create(name="numbering")
    CalibrationItem.objects.create(sample=sample, turn_result=result, item=1, stratum="x", position=0)
    client.force_login(physicians["reviewer"])
    url = reverse("evaluation:calibration_grade", kwargs={"pk": sample.pk, "turn_result": result.pk})
    html = client.get(url).content.decode()
    items = re.findall(r'<li class="calibration-item[^"]*"[^>]*>.*?</li>', html, re.S)
    assert len(items) == 1
    # The list numbers the item with its rubric number (2), and the text does not number it again.
    assert 'value="2"' in items[0]
    rubric_text = re.search(r'<p class="rubric-text"[^>]*>(.*?)</p>', items[0], re.S).group(1)
    assert not re.match(r"\s*\d+\.", re.sub(r"<[^>]+>", "", rubric_text)), rubric_text
