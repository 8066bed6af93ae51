"""What the review screen caches between visits, and what makes it read the turn again.

The editor's fields (keyed by turn version, draft and suggestion generation), the gold audit (forgotten
when an audit run replaces it) and the guidelines (forgotten on save) are reused across visits; each test
checks that a visit after the change shows the change.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.cache import caches
from django.urls import reverse

from annotations import review_context
from annotations.models import Guideline
from scenarios.audit.services import audit_sessions
from scenarios.models import GoldAudit, RubricItem
from scenarios.rubric_compiler.services import compile_stored

pytestmark = pytest.mark.django_db


def _page(client, turn):
    return client.get(reverse("annotations:turn", args=[turn.pk]))


def _rubric_queries(captured):
    return [q["sql"] for q in captured if 'FROM "scenarios_rubricitem"' in q["sql"]]


def test_a_second_visit_reads_no_steps_or_rubric_and_a_draft_save_shows_anew(
    client, turn, reviewers, django_assert_max_num_queries
):
    client.force_login(reviewers[0])
    with django_assert_max_num_queries(40) as first:
        assert 'name="answer_en"' in _page(client, turn).text
    assert _rubric_queries(first.captured_queries)  # rendered: the rubric was read
    with django_assert_max_num_queries(len(first) - 2) as second:
        again = _page(client, turn).text
    assert not _rubric_queries(second.captured_queries) and 'name="answer_en"' in again
    assert "Creatinine, as of the record" not in again

    data = {"base_version": turn.version, "answer_en": "Creatinine, as of the record, is 1.4 mg/dL.", "draft": "1"}
    saved = client.post(reverse("annotations:edit", args=[turn.pk]), data)
    assert "Draft saved." in saved.text and "Creatinine, as of the record" in saved.text
    assert "Creatinine, as of the record" in _page(client, turn).text  # the new draft, not the cached turn
    # The co-reviewer has no draft: they see the turn as it is.
    client.force_login(reviewers[1])
    assert "Creatinine, as of the record" not in _page(client, turn).text


def test_suggestions_stored_in_bulk_reach_an_editor_cached_before(
    client, turn, adjudicator, django_capture_on_commit_callbacks
):
    RubricItem.objects.filter(turn=turn).update(machine_check=None)
    client.force_login(adjudicator)
    assert 'name="rubric-0-compiled"' not in _page(client, turn).text
    with django_capture_on_commit_callbacks(execute=True):  # the counter moves once the items are stored
        compile_stored(items=RubricItem.objects.filter(turn=turn))  # no new version of the turn
    page = _page(client, turn).text
    assert 'name="rubric-0-compiled"' in page and "compiled suggestion" in page


def test_an_audit_run_replaces_the_cached_audit(client, turn, reviewers):
    client.force_login(reviewers[0])
    assert 'id="gold-audit"' not in _page(client, turn).text
    GoldAudit.objects.all().delete()
    turn.answer_en = "Creatinine is 9.87 mg/dL."  # a number no tool result holds
    turn.save(update_fields=["answer_en"])
    audit_sessions(sessions=[turn.session])
    page = _page(client, turn).text
    assert 'id="gold-audit"' in page and "9.87" in page


def test_a_saved_guideline_shows_at_the_next_visit(client, turn, reviewers, admin_user):
    guideline = Guideline.objects.create(language="en", title="How to review", body_markdown="Check the **dose**.")
    client.force_login(reviewers[0])
    page = _page(client, turn).text
    assert "How to review" in page and "Check the <strong>dose</strong>." in page
    guideline.title, guideline.body_markdown = "Review rules, second edition", "Check the **route**."
    guideline.save()
    page = _page(client, turn).text
    assert "Review rules, second edition" in page and "Check the <strong>route</strong>." in page
    guideline.delete()
    assert "No guidelines have been written yet." in _page(client, turn).text


@pytest.fixture
def redis_default_cache(broker_url, settings):
    """The default cache on the CI Redis (another database than the broker's), as a deployment runs it."""
    url = urlunsplit(urlsplit(broker_url)._replace(path="/13"))
    settings.CACHES = {
        **settings.CACHES,
        "default": {"BACKEND": "core.cacheredis.ReusedClientRedisCache", "LOCATION": url, "KEY_PREFIX": "rc"},
    }
    caches["default"].clear()
    yield caches["default"]
    caches["default"].clear()


def test_with_redis_a_second_visit_reads_the_shared_keys_in_one_round_trip(
    client, turn, reviewers, redis_default_cache, monkeypatch
):
    Guideline.objects.create(language="en", title="How to review", body_markdown="Check the **dose**.")
    client.force_login(reviewers[0])
    first = _page(client, turn).text  # renders and stores the fragments, header, guidelines, audit
    commands = []
    redis_client = redis_default_cache._cache.get_client()
    execute = redis_client.execute_command
    monkeypatch.setattr(redis_client, "execute_command", lambda *a, **k: commands.append(a) or execute(*a, **k))
    second = _page(client, turn).text
    assert second == first.replace(_csrf(first), _csrf(second))  # the same page, from the cache
    # One MGET for the keys every reviewer shares; one GET for the editor (its key depends on the reviewer's
    # draft); nothing is written. The generations in the keys are read from the database (issue 36, F10).
    assert [c[0] for c in commands] == ["MGET", "GET"], commands
    assert len(commands[0]) - 1 == len(review_context.cache_keys(turn=turn, language="en")) == 5
    assert "review_editor" in commands[1][1]
    assert "Check the <strong>dose</strong>." in second and 'id="evidence"' in second


def _csrf(page: str) -> str:
    return re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
