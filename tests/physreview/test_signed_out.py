"""An expired login seen by a fragment (htmx) request: 401, which htmx does not swap, so the page and what was typed
in it stay (issue 35: the login page was swapped into the decision panel and the text lost). The login link returns
to the page the request came from, not to the POST-only fragment URL. Plain page requests still redirect."""

import pytest
from django.urls import reverse

from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def test_htmx_request_without_a_session_gets_401_and_the_way_back(client):
    turn = complete_session().turns.get(index=0)
    page = f"http://testserver/review/turns/{turn.pk}/"
    response = client.post(
        reverse("annotations:edit", args=[turn.pk]), {"answer_en": "typed"}, HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=page,
    )  # fmt: skip
    assert response.status_code == 401 and response.content == b""
    assert response["X-Login-URL"] == f"/accounts/login/?next=/review/turns/{turn.pk}/"


def test_a_foreign_current_url_is_not_a_way_back(client):
    turn = complete_session().turns.get(index=0)
    response = client.post(
        reverse("annotations:approve", args=[turn.pk]), HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="https://evil.example/phish",
    )  # fmt: skip
    assert response.status_code == 401 and response["X-Login-URL"] == "/accounts/login/?next=/"


def test_a_page_request_without_a_session_still_goes_to_the_login_page(client):
    turn = complete_session().turns.get(index=0)
    response = client.get(reverse("annotations:turn", args=[turn.pk]))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
