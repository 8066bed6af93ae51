"""The red bar on lab rows is explained (issue 35: "the red bar on lab rows has no legend").

Cases: the factory admission (creatinine and potassium flagged abnormal by MIMIC before the session date) on the
review screen's EHR evidence panel and on the admission page, in English and Chinese. The bar is CSS
(``tr.abnormal td:first-child``); the legend draws the same colour and says what sets it (MIMIC's flag).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from annotations import services
from tests.ehr.factories import build_record
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged_turn(reviewers):
    record = build_record()
    session = complete_session(
        subject_id=record.subject_id, hadm_id=record.current_hadm, current_date=dt.date(2180, 7, 21)
    )
    services.assign(session=session, reviewer=reviewers[0], by=None)
    return session.turns.get(index=0)


LEGEND_EN = "Red bar: the latest result is flagged abnormal in the record (outside its reference range)."
LEGEND_ZH = "红色竖条：该检验的最新结果在病历中被标记为异常（超出参考范围）。"


def _evidence(html: str) -> str:
    return re.search(r'<section class="card evidence" id="evidence">.*?</section>', html, re.S).group(0)


def test_review_screen_labs_have_a_legend_in_both_languages(client, flagged_turn, reviewers):
    client.force_login(reviewers[0])
    cache.clear()  # the evidence panel is a cached fragment
    panel = _evidence(
        client.get(reverse("annotations:turn", args=[flagged_turn.pk]), headers={"accept-language": "en"}).text
    )
    assert 'class="abnormal"' in panel  # the factory record has flagged labs
    assert 'id="evidence-labs-legend"' in panel and LEGEND_EN in panel
    assert panel.index("evidence-labs-legend") < panel.index('id="evidence-labs"')  # above the table it explains
    # Each flagged row also says so in text (screen readers do not see the bar).
    assert panel.count('<tr class="abnormal">') == panel.count('<span class="sr-only">(abnormal)</span>')
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    panel = _evidence(client.get(reverse("annotations:turn", args=[flagged_turn.pk])).text)
    assert LEGEND_ZH in panel and "(异常)" in panel


def test_admission_page_labs_have_the_legend(client, flagged_turn, reviewers):
    client.force_login(reviewers[0])
    session = flagged_turn.session
    html = client.get(reverse("ehr:admission_detail", args=[session.hadm_id])).text
    assert 'class="abnormal"' in html and 'id="labs-legend"' in html and LEGEND_EN in html


def test_legend_bar_has_the_row_bar_colour():
    css = (Path(settings.BASE_DIR) / "static" / "css" / "app.css").read_text()
    assert "tr.abnormal td:first-child { border-left: 3px solid var(--warn); }" in css
    assert re.search(r"\.legend-bar \{[^}]*background: var\(--warn\)", css)
