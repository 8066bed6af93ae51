"""The review screen loads a step's raw observation JSON on demand (same visibility as the turn)."""

import json

from django.urls import reverse

from tests.scenarios.factories import complete_session


def test_raw_json_is_fetched_on_demand(client, turn, reviewers):
    client.force_login(reviewers[0])
    page = client.get(reverse("annotations:turn", args=[turn.pk])).text
    raw_url = reverse("annotations:step_raw", args=[turn.pk])
    assert f'hx-get="{raw_url}?step=0"' in page and "Raw JSON" in page
    step = turn.steps.get(idx=0)
    response = client.get(raw_url, {"step": 0})
    assert response.status_code == 200
    # Escaped, indented JSON of the stored observation.
    assert "<" not in response.text
    text = response.text.replace("&quot;", '"').replace("&#x27;", "'").replace("&amp;", "&")
    text = text.replace("&lt;", "<").replace("&gt;", ">")
    assert json.loads(text) == json.loads(json.dumps(step.observation, default=str))
    assert client.get(raw_url, {"step": 99}).status_code == 404
    assert client.get(raw_url).status_code == 400


def test_raw_json_of_an_unassigned_turn_is_404(client, reviewers):
    other = complete_session(record_id="raw-other").turns.get(index=0)
    client.force_login(reviewers[0])
    response = client.get(reverse("annotations:step_raw", args=[other.pk]), {"step": 0})
    assert response.status_code == 404
