"""Draft saves under concurrency: the same reviewer in two tabs gets the conflict flow (no silent
overwrite), and many simultaneous saves by two reviewers never answer a server error."""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.urls import reverse

from annotations import services
from annotations.content import snapshot
from annotations.models import Review
from tests.annotations.conftest import make_user
from tests.annotations.test_views_editor import form_data
from tests.databases import serves_concurrent_connections
from tests.scenarios.factories import complete_session


def _token(html: str) -> str:
    return re.search(r'name="draft_token" value="([^"]*)"', html)[1]


@pytest.mark.django_db
def test_same_reviewer_in_two_tabs_gets_the_conflict_flow(turn, reviewers):
    tabs = [Client(), Client()]
    page = {}
    for name, tab in zip("AB", tabs, strict=True):
        tab.force_login(reviewers[0])
        page[name] = tab.get(reverse("annotations:turn", args=[turn.pk])).content.decode()
    shown = snapshot(turn=turn)
    edit = reverse("annotations:edit", args=[turn.pk])

    first = tabs[0].post(edit, form_data(shown, 1, answer_en="Tab A answer.", draft="1", draft_token=_token(page["A"])))
    assert "Draft saved." in first.content.decode()
    # Tab B still shows the page from before tab A's save.
    second = tabs[1].post(
        edit, form_data(shown, 1, answer_en="Tab B answer.", draft="1", draft_token=_token(page["B"]))
    )
    body = second.content.decode()
    assert second.status_code == 200 and 'id="merge-form"' in body and "another tab" in body
    assert 'name="merge-answer_en"' in body and "Tab A answer." in body and "Tab B answer." in body
    assert Review.objects.get(turn=turn, reviewer=reviewers[0]).proposed["answer_en"] == "Tab A answer."

    # The merge form (with the newer draft's token) saves the merged text into the draft.
    merged = tabs[1].post(
        reverse("annotations:merge", args=[turn.pk]),
        {"base_version": 1, "draft_token": _token(body), "merge-answer_en": "Merged A+B."},
    )
    assert "Merged into your draft." in merged.content.decode()
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert review.proposed["answer_en"] == "Merged A+B." and review.submitted_at is None
    # Tab A, now stale in turn, cannot overwrite it silently either.
    again = tabs[0].post(
        edit, form_data(shown, 1, answer_en="Tab A again.", draft="1", draft_token=_token(first.content.decode()))
    )
    assert 'id="merge-form"' in again.content.decode()
    assert Review.objects.get(pk=review.pk).proposed["answer_en"] == "Merged A+B."


@pytest.mark.django_db
def test_service_refuses_a_stale_draft_token_only_when_it_changes_something(turn, reviewers):
    review = services.save_draft_review(
        turn=turn, reviewer=reviewers[0], proposed={"answer_en": "One."}, draft_token=""
    )
    with pytest.raises(services.DraftConflict) as info:
        services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_en": "Two."}, draft_token="")
    assert [d.field for d in info.value.diffs] == ["answer_en"] and info.value.current["answer_en"] == "One."
    # Same value, or nothing to change: not a conflict. The current token: saved.
    services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_en": "One."}, draft_token="")
    review.refresh_from_db()
    token = services.reviews.current_token(review)
    services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_en": "Two."}, draft_token=token)
    assert Review.objects.get(pk=review.pk).proposed["answer_en"] == "Two."


def _hammer(turns, users, saves: int, workers: int) -> list[str]:
    """``saves`` draft saves over HTTP, spread over the turns and both reviewers, ``workers`` at a time;
    every server error or exception is returned."""
    rng = random.Random(7)
    jobs = [(users[i % 2], rng.choice(turns), i) for i in range(saves)]
    local = threading.local()
    errors: list[str] = []

    def save(job) -> None:
        user, turn, i = job
        try:
            if getattr(local, "clients", None) is None:
                local.clients = {}
            client = local.clients.get(user.pk)
            if client is None:
                client = local.clients[user.pk] = Client(raise_request_exception=False)
                client.force_login(user)
            response = client.post(
                reverse("annotations:edit", args=[turn.pk]),
                {"base_version": 1, "answer_en": f"draft {i} by {user.username}", "draft": "1"},
            )
            if response.status_code >= 500 or "Draft saved." not in response.content.decode():
                errors.append(f"{response.status_code}: {response.content[:200]!r}")
        except Exception as exc:  # the test counts every failure
            errors.append(repr(exc))

    def run(chunk) -> None:
        try:
            for job in chunk:
                save(job)
        finally:
            connections.close_all()

    chunks = [jobs[i::workers] for i in range(workers)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(run, chunks))
    return errors


def _setup(admin_name: str):
    admin = make_user(admin_name, "admin")
    users = [make_user(f"{admin_name}_r1", "reviewer"), make_user(f"{admin_name}_r2", "reviewer")]
    turns = []
    for _ in range(3):
        session = complete_session()
        for user in users:
            services.assign(session=session, reviewer=user, by=admin)
        turns.extend(session.turns.all())
    return users, turns


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not serves_concurrent_connections(), reason="needs a database that serves several connections")
def test_200_concurrent_draft_saves_by_two_reviewers_give_no_server_error():
    users, turns = _setup("load_pg")
    errors = _hammer(turns, users, saves=200, workers=8)
    assert errors == []
    assert Review.objects.count() == 2 * len(
        {t.pk for t in turns} & set(Review.objects.values_list("turn_id", flat=True))
    )


def test_two_concurrent_editors_on_a_sqlite_file_give_no_server_error(tmp_path):
    """The demo database: two editors taking leases and saving drafts at once (a subprocess, since the
    test database is in memory): no 'database is locked' 500."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}", "PYTHONPATH": str(settings.BASE_DIR)}
    run = functools.partial(subprocess.run, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=600)
    migrated = run([sys.executable, "manage.py", "migrate", "-v0"])
    assert migrated.returncode == 0, migrated.stderr
    result = run([sys.executable, "tests/annotations/sqlite_load.py"])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"errors": []}
