"""Shared steps of the review e2e tests: users with a password, logging in through the login page."""

from __future__ import annotations

from tests.annotations.conftest import make_user

PASSWORD = "pw-e2e-review-123456"


def user_with_password(username: str, role: str):
    user = make_user(username, role)
    user.set_password(PASSWORD)
    user.save()
    return user


def login(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    assert "/accounts/login/" not in page.url, f"login of {username} failed"


def superuser_with_password(username: str):
    """An admin-role user who may also open the Django admin."""
    user = user_with_password(username, "admin")
    user.is_staff = user.is_superuser = True
    user.save()
    return user


def open_editor(page) -> None:
    """Open the review screen's editor, unless it is open already (takes or shows the lease)."""
    page.wait_for_selector("#edit-panel")
    if page.locator("#edit-panel[open]").count() == 0:  # a saved draft opens it by itself (issue 35)
        page.click("#edit-panel > summary")
    page.wait_for_selector("#edit-panel[open] #lease", state="attached")


# Posts the page's edit form ``count`` times at once (each with its own answer text) as htmx would, and
# leaves the promise of their outcomes in ``window.__draftSaves`` (await it with page.evaluate).
_FIRE_DRAFT_SAVES = """([count, label]) => {
  const form = document.querySelector('#edit-form');
  const save = (i) => {
    const data = new FormData(form);
    data.set('answer_en', `draft ${i} by ${label}`);
    data.set('draft', '1');
    return fetch(form.getAttribute('hx-post'), {method: 'POST', body: data, headers: {'HX-Request': 'true'}})
      .then(async (r) => {
        const html = await r.text();
        return {status: r.status, saved: html.includes('Draft saved.'), conflict: html.includes('id="merge-form"')};
      })
      .catch((e) => ({status: 0, error: String(e), saved: false, conflict: false}));
  };
  window.__draftSaves = Promise.all(Array.from({length: count}, (_, i) => save(i)));
}"""


def fire_draft_saves(page, *, count: int, label: str) -> None:
    page.evaluate(_FIRE_DRAFT_SAVES, [count, label])


def leave_pages(*contexts, turn, timeout: float = 10.0) -> None:
    """Leave every page of ``contexts`` and wait until their lease releases (sent as beacons on pagehide) are
    done, then close the contexts: a release still running when the test database is flushed deadlocks
    with the flush's TRUNCATE."""
    import time

    from annotations.models import Lease

    for context in contexts:
        for page in context.pages:
            page.goto("about:blank")
    deadline = time.monotonic() + timeout
    while Lease.objects.filter(turn=turn).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    for context in contexts:
        context.close()
