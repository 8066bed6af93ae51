"""Issue 36, F10: with the default in-process cache, a change made in another process (another gunicorn worker
where an admin saved the guidelines, or a management command: ``compile_rubrics``, ``audit_gold``) never reached
a process that had cached the review screen: it showed the old guidelines, editor and gold audit until the
cache entries expired. Each case renders the screen here (caching it), makes the change in a subprocess on the
same database, and checks that the next visit here shows it. Complements test_review_caches (one process)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from annotations.models import Guideline
from scenarios.models import GoldAudit, RubricItem
from tests.physreview.startup import run_python

pytestmark = pytest.mark.django_db(transaction=True)  # the other process reads committed rows only


def _database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _elsewhere(args: list[str], tmp_path) -> str:
    """``python ARGS`` in another process on the test database, with its own in-memory cache (the default)."""
    result = run_python(args, env={"DATABASE_URL": _database_url(), "CACHE_URL": "locmem://"}, var_dir=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _page(client, turn) -> str:
    return client.get(reverse("annotations:turn", args=[turn.pk])).content.decode()


def test_a_guideline_saved_in_another_process_shows_at_the_next_visit(client, turn, reviewers, tmp_path):
    Guideline.objects.create(language="en", title="How to review", body_markdown="Check the **dose**.")
    client.force_login(reviewers[0])
    assert "Check the <strong>dose</strong>." in _page(client, turn)  # cached here
    code = (
        "import django; django.setup(); from annotations.models import Guideline; "
        "g = Guideline.objects.get(language='en'); g.title = 'Review rules, second edition'; "
        "g.body_markdown = 'Check the **route**.'; g.save()"
    )
    _elsewhere(["-c", code], tmp_path)
    page = _page(client, turn)
    assert "Review rules, second edition" in page and "Check the <strong>route</strong>." in page


def test_suggestions_stored_by_compile_rubrics_reach_an_editor_cached_here(client, turn, adjudicator, tmp_path):
    RubricItem.objects.filter(turn=turn).update(machine_check=None)
    client.force_login(adjudicator)
    assert 'name="rubric-0-compiled"' not in _page(client, turn)  # the editor is cached here
    _elsewhere(["manage.py", "compile_rubrics", "--session", turn.session.record_id, "--quiet"], tmp_path)
    assert RubricItem.objects.filter(turn=turn).exclude(compiled_check=None).exists()
    page = _page(client, turn)
    assert 'name="rubric-0-compiled"' in page and "compiled suggestion" in page


def test_an_audit_stored_by_audit_gold_replaces_the_audit_cached_here(client, turn, reviewers, tmp_path):
    client.force_login(reviewers[0])
    GoldAudit.objects.all().delete()
    turn.answer_en = "Creatinine is 9.87 mg/dL."  # a number no tool result holds
    turn.save(update_fields=["answer_en"])
    assert 'id="gold-audit"' not in _page(client, turn)  # "no audit" is cached here
    _elsewhere(["manage.py", "audit_gold", "--sessions", turn.session.record_id, "--quiet"], tmp_path)
    assert GoldAudit.objects.filter(turn=turn).exists()
    page = _page(client, turn)
    assert 'id="gold-audit"' in page and "9.87" in page
