"""The gold audit on the review screen (a warning on each affected turn, EN and ZH) and on the dashboard."""

from __future__ import annotations

import html

import pytest
from django.conf import settings
from django.urls import reverse

from annotations import services
from scenarios.audit import audit_sessions
from tests.scenarios.audit_fixtures import add_defects, clean_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def audited(reviewers, admin_user):
    """The session with the three defects, assigned to rev1 and rev2, audited."""
    session = clean_session()
    touched = add_defects(session)
    for reviewer in reviewers[:2]:
        services.assign(session=session, reviewer=reviewer, by=admin_user)
    audit_sessions(sessions=[session], bounds="strict")
    session.touched = touched
    return session


def _page(client, session, index: int) -> str:
    turn = session.turns.get(index=index)
    response = client.get(reverse("annotations:turn", args=[turn.pk]))
    assert response.status_code == 200
    return html.unescape(response.text)


def test_each_affected_turn_shows_its_findings_in_plain_words(client, audited, reviewers):
    client.force_login(reviewers[0])
    first = _page(client, audited, 0)
    assert 'id="gold-audit"' in first
    assert "no longer gives its stored result when run against the record" in first
    # canonical fact names since issue 33 (the value, compared apart from its unit)
    assert f"{audited.touched['edited_resource']}, value: stored 0.8 mg/dL, now 0.9 mg/dL" in first

    second = _page(client, audited, 1)
    assert "The number <strong>6.3 mEq/L</strong> is in no tool result or declared derivation" in second
    assert "(gold answer EN, gold answer ZH)" in second
    assert "Possible false premise: the request says “warfarin 2.5 mg”." in second
    assert "The record at the current date: <strong>Warfarin 5 mg PO 1 time per day" in second

    for clean in (2, 3):
        assert 'id="gold-audit"' not in _page(client, audited, clean)


def test_the_warning_follows_the_ui_language(client, audited, reviewers):
    client.force_login(reviewers[0])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    second = _page(client, audited, 1)
    assert "标准数据核查" in second
    assert "数值 <strong>6.3 mEq/L</strong> 不在本会话的任何工具结果或已声明的推导中。" in second
    assert "可能是错误前提：请求中说“warfarin 2.5 mg”。" in second
    assert "标准调用 0（<code>Observation.search</code>）在病历上重新执行" in _page(client, audited, 0)


def test_a_turn_never_audited_shows_nothing(client, turn, reviewers):
    client.force_login(reviewers[0])
    response = client.get(reverse("annotations:turn", args=[turn.pk]))
    assert response.status_code == 200 and 'id="gold-audit"' not in response.text


def test_dashboard_totals_line(client, reviewers, audited):
    client.force_login(reviewers[0])
    page = html.unescape(client.get(reverse("annotations:dashboard")).text)
    assert 'id="gold-audit-totals"' in page
    assert "14 of 15 gold EHR calls reproduced, 1 differ, 0 depend on data after the current date." in page
    assert "1 untraced numbers, 1 possible false premises; 2 of 4 audited turns need a look." in page


def test_dashboard_before_any_audit(client, reviewers):
    # A physician is not told to run a management command (issue 35); staff are told which one.
    client.force_login(reviewers[0])
    page = html.unescape(client.get(reverse("annotations:dashboard")).text)
    assert "The gold audit has not been run yet: an administrator runs it" in page and "manage.py" not in page
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    assert "尚未运行标准数据核查" in client.get(reverse("annotations:dashboard")).text
    reviewers[0].is_staff = True
    reviewers[0].save()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = html.unescape(client.get(reverse("annotations:dashboard")).text)
    assert "The gold audit has not been run yet (manage.py audit_gold)." in page
