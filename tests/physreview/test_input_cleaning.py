# ruff: noqa: F811 (fixtures imported from tests.annotations.conftest)
"""One input-cleaning layer (core.cleaning): NUL, lone surrogates, deep JSON, over-long values → 400."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.urls import reverse

from annotations.models import Comment, Review
from core.cleaning import MAX_JSON_DEPTH, check_json, text_problem
from evaluation.models import CalibrationSample
from tests.annotations.api.conftest import token_client
from tests.annotations.conftest import adjudicator, admin_user, assigned, reviewers, session, turn  # noqa: F401
from tests.annotations.test_views_editor import form_data
from tests.evaluation.calibration.conftest import make_run, rules_passed
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def _page_error(response) -> str:
    assert response.status_code == 400, response.status_code
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert 'class="banner banner-error"' in body  # the app's styled page, not a bare error
    return body


def _api_error(response) -> str:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    return response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("a\x00b", "NUL"),
        ("a\ud800b", "lone surrogate"),
        ('{"code": "\\u0000"}', "escaped NUL"),
        ('{"code": "\\ud800"}', "escaped NUL or lone surrogate"),
        ('{"code": "\\udc00x"}', "escaped NUL or lone surrogate"),
    ],
)
def test_text_problem_names_the_defect(value, problem):
    assert problem in text_problem(value)


@pytest.mark.parametrize("value", ["plain", "肌酐 creatinine", "😀", '{"emoji": "\\ud83d\\ude00"}', "tab\tnewline\n"])
def test_text_problem_accepts_ordinary_text(value):
    assert text_problem(value) == ""


def test_check_json_limits_depth_and_names_the_path():
    check_json(json.loads("[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)))
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_JSON_DEPTH}"):
        check_json(json.loads("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)))
    with pytest.raises(ValueError, match=r"changes.steps\[0\].arguments.code contains a lone surrogate"):
        check_json({"changes": {"steps": [{"arguments": {"code": "\ud800"}}]}})


def test_nul_in_a_query_string_is_a_400_page(client, reviewers):
    client.force_login(reviewers[0])
    body = _page_error(client.get("/ehr/patients/?q=%00"))
    assert "query string: field &#x27;q&#x27; contains a NUL character" in body


def test_nul_in_the_url_path_is_a_400(client, admin_user):
    client.force_login(admin_user)
    assert "URL path contains a NUL" in _page_error(client.get("/snapshots/v1%00/files/SHA256SUMS"))


def test_schema_version_cannot_reach_content_disposition(client):
    assert "NUL" in _api_error(client.get("/api/schema/?version=%00"))
    response = client.get("/api/schema/?version=a%0D%0Ab")  # a header split, were it copied into the filename
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'inline; filename="PhysReview API.yaml"'


def test_nul_in_review_form_fields_is_a_400(client, turn, reviewers):
    client.force_login(reviewers[0])
    response = client.post(reverse("annotations:comment", args=[turn.pk]), {"text": "see\x00here"})
    assert "field &#x27;text&#x27; contains a NUL character" in _page_error(response)
    assert not Comment.objects.filter(turn=turn).exists()


def test_escaped_surrogate_in_step_arguments_is_a_400(client, turn, reviewers):
    from annotations.content import snapshot

    client.force_login(reviewers[0])
    data = form_data(snapshot(turn=turn), turn.version, **{"step-0-arguments": '{"code": "\\ud800"}'})
    response = client.post(reverse("annotations:edit", args=[turn.pk]), data)
    assert "step-0-arguments" in _page_error(response)
    data = form_data(snapshot(turn=turn), turn.version, answer_en="fine\x00")
    assert "answer_en" in _page_error(client.post(reverse("annotations:edit", args=[turn.pk]), data))
    assert not Review.objects.filter(turn=turn).exists()  # no draft was saved


def test_api_json_deep_surrogate_and_nul_are_400(turn, reviewers):
    api = token_client(reviewers[0])
    url = f"/api/turns/{turn.pk}/edit/"
    deep = "[" * 5000 + "]" * 5000
    assert "nested deeper than" in _api_error(api.post(url, deep, content_type="application/json"))
    body = '{"base_version": 1, "changes": {"answer_en": "x\\ud800"}}'
    assert "changes.answer_en contains a lone surrogate" in _api_error(
        api.post(url, body, content_type="application/json")
    )
    body = '{"base_version": 1, "changes": {"answer_en": "x\\u0000"}}'
    assert "changes.answer_en contains a NUL" in _api_error(api.post(url, body, content_type="application/json"))
    assert "NUL" in _api_error(api.get("/api/turns/?search=%00"))


def test_over_long_sample_name_is_a_400_not_a_500(client, adjudicator):
    """A 101-character calibration sample name (varchar 100): the database's refusal becomes a 400."""
    run = make_run(sessions=[complete_session()], judge="rules", passed=rules_passed)
    client.force_login(adjudicator)
    data = {"name": "x" * 101, "runs": [run.pk], "per_stratum": 1}
    response = client.post(reverse("evaluation:calibration_draw"), data)
    if connection.vendor == "postgresql":
        assert "could not be stored: value too long" in _page_error(response)
        assert not CalibrationSample.objects.exists()
    else:  # SQLite does not enforce varchar lengths: stored as given, never a 500
        assert response.status_code < 500
