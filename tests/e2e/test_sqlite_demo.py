"""Issue 16's SQLite bugs in Chromium, against the demo as `make demo` serves it: the demo prepared into a
SQLite file and Django's threaded runserver in its own process (not the live server on the test database).

- Two reviewers in two browser contexts take the lease and save drafts at once: "database is locked" once
  answered 500 on the lease call.
- The results drill-down's "Safety failures" filter, page and API: ``verdicts__contains`` answered 500 there.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

TIMEOUT = 600
# Each call posts the page's edit form (a draft with this reviewer's answer text) and takes the lease,
# ``count`` times, all at once; the outcomes are left in ``window.__burst`` (await it with page.evaluate).
_FIRE_BURST = """([count, label]) => {
  const form = document.querySelector('#edit-form');
  const token = form.querySelector('input[name=csrfmiddlewaretoken]').value;
  const post = (url, data) => fetch(url, {method: 'POST', body: data, headers: {'HX-Request': 'true'}})
    .then(async (r) => ({url, status: r.status, html: await r.text()}))
    .catch((e) => ({url, status: 0, html: String(e)}));
  const calls = [];
  for (let i = 0; i < count; i++) {
    const draft = new FormData(form);
    draft.set('answer_en', `sqlite draft ${i} by ${label}`);
    draft.set('draft', '1');
    calls.push(post(form.getAttribute('hx-post'), draft));
    const lease = new FormData();
    lease.set('csrfmiddlewaretoken', token);
    calls.push(post(form.getAttribute('hx-post').replace('/edit/', '/lease/'), lease));
  }
  window.__burst = Promise.all(calls);
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sqlite_demo(tmp_path_factory):
    """The demo in a SQLite file with one heuristic evaluation run, served by runserver; yields
    ``(base_url, database_path, passwords, server_log)``."""
    root = tmp_path_factory.mktemp("sqlite_demo")
    database = root / "demo.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{database}", PHYSREVIEW_VAR_DIR=str(root / "var"))
    manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
    run = {"cwd": settings.BASE_DIR, "env": env, "capture_output": True, "text": True, "timeout": TIMEOUT}
    demo = subprocess.run([*manage, "demo", "--no-serve", "--quiet"], **run)
    assert demo.returncode == 0, demo.stderr
    heuristic = ["runeval", "--model", "rules:heuristic", "--snapshot", "none", "--sessions", "all", "--quiet"]
    evaluation = subprocess.run([*manage, *heuristic, "--output", str(root / "run")], **run)
    assert evaluation.returncode == 0, evaluation.stderr
    passwords = json.loads((root / "var" / "demo_credentials.json").read_text())
    port = _free_port()
    log = root / "runserver.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [*manage, "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield base, database, passwords, log
    finally:
        server.terminate()
        server.wait(timeout=30)


def _login(browser, base: str, username: str, password: str):
    context = browser.new_context(base_url=base)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    assert "/accounts/login/" not in page.url, f"login of {username} failed"
    return context, page


def _server_errors(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if "Traceback" in line or '" 500 ' in line]


def test_two_reviewers_take_the_lease_and_save_drafts_at_once_on_sqlite(browser, sqlite_demo, screenshot_dir):
    base, database, passwords, log = sqlite_demo
    pairs = [_login(browser, base, f"demo_{key}", passwords[key]) for key in ("reviewer", "reviewer2")]
    pages = [page for _context, page in pairs]
    try:
        with sqlite3.connect(database) as db:  # a pending turn of a session both demo reviewers review
            (turn_id,) = db.execute(
                "SELECT t.id FROM scenarios_turn t JOIN annotations_assignment a ON a.session_id = t.session_id "
                "JOIN auth_user u ON u.id = a.reviewer_id WHERE t.status = 'in_review' "
                "AND u.username IN ('demo_reviewer', 'demo_reviewer2') AND NOT EXISTS "
                "(SELECT 1 FROM annotations_review r WHERE r.turn_id = t.id) "
                "GROUP BY t.id HAVING COUNT(DISTINCT u.id) = 2 ORDER BY t.id LIMIT 1"
            ).fetchone()
        for page in pages:
            page.goto(f"/review/turns/{turn_id}/")
            page.wait_for_selector("#edit-form", state="attached")
        for page, key in zip(pages, ("reviewer", "reviewer2"), strict=True):
            page.evaluate(_FIRE_BURST, [15, key])  # started, not awaited: the two bursts overlap
        results = {
            key: page.evaluate("window.__burst") for page, key in zip(pages, ("reviewer", "reviewer2"), strict=True)
        }
        pages[0].goto(f"/review/turns/{turn_id}/")
        pages[0].screenshot(path=str(screenshot_dir / "bugs_sqlite_two_editors.png"), full_page=True)
    finally:
        for context, _page in pairs:
            context.close()

    for key, responses in results.items():
        assert len(responses) == 30, key
        failed = [(r["url"], r["status"], r["html"][:200]) for r in responses if not 200 <= r["status"] < 500]
        assert failed == [], (key, failed)
        assert not [r for r in responses if "database is locked" in r["html"]], key
        leases = [r for r in responses if r["url"].endswith("/lease/")]
        assert len(leases) == 15 and all('id="lease"' in r["html"] for r in leases), key
    assert _server_errors(log) == []
    with sqlite3.connect(database) as db:  # each reviewer's draft, with that reviewer's own text
        drafts = db.execute(
            "SELECT u.username, r.proposed, r.submitted_at FROM annotations_review r "
            "JOIN auth_user u ON u.id = r.reviewer_id WHERE r.turn_id = ?",
            (turn_id,),
        ).fetchall()
    assert sorted(username for username, _p, _s in drafts) == ["demo_reviewer", "demo_reviewer2"]
    for username, proposed, submitted_at in drafts:
        assert submitted_at is None
        assert json.loads(proposed)["answer_en"].endswith(f"by {username.removeprefix('demo_')}")


def test_safety_failures_filter_on_sqlite_page_and_api(browser, sqlite_demo, screenshot_dir):
    base, _database, passwords, log = sqlite_demo
    context, page = _login(browser, base, "demo_adjudicator", passwords["adjudicator"])
    try:
        runs = page.request.get("/api/runs/")
        assert runs.status == 200, runs.text()
        run_id = max(r["id"] for r in runs.json()["results"])
        expected: set[int] = set()
        url = f"/api/runs/{run_id}/turns/?show=safety&page_size=100"
        while url:
            api = page.request.get(url)
            assert api.status == 200 and api.headers["content-type"].startswith("application/json"), api.text()[:300]
            body = api.json()
            expected |= {r["id"] for r in body["results"]}
            url = body["next"]
        assert len(expected) == body["count"]
        assert expected, "the heuristic run over the demo set should fail at least one safety item"

        page.goto(f"/results/runs/{run_id}/turns/")
        page.select_option("#turn-filters select[name=show]", "safety")
        with page.expect_response(lambda r: "show=safety" in r.url) as info:
            page.click("#turn-filters button[type=submit]")
        assert info.value.status == 200
        page.wait_for_selector("#turn-results")
        rows = page.query_selector_all("#turn-results tr[data-result]")
        assert rows and {int(r.get_attribute("data-result")) for r in rows} <= expected
        page.screenshot(path=str(screenshot_dir / "bugs_sqlite_safety_filter.png"), full_page=True)
    finally:
        context.close()
    assert _server_errors(log) == []
