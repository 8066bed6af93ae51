"""Two reviewers saving drafts and taking leases at once on a SQLite *file* database (the demo's).

Run by tests/annotations/test_draft_concurrency.py in a subprocess with DATABASE_URL pointing at a
migrated temporary file (the test database of pytest-django is in memory, where SQLite locks
differently). Prints one JSON line: the server errors and exceptions seen (expected: none).
"""

from __future__ import annotations

import json
import os
import sys
import threading

import django


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    django.setup()
    from django.db import connections
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from annotations import services
    from tests.annotations.conftest import make_user
    from tests.scenarios.factories import complete_session

    setup_test_environment()  # testserver host, in-memory e-mail
    admin = make_user("sqlite_admin", "admin")
    users = [make_user("sqlite_r1", "reviewer"), make_user("sqlite_r2", "reviewer")]
    session = complete_session()
    for user in users:
        services.assign(session=session, reviewer=user, by=admin)
    turns = list(session.turns.order_by("index"))
    connections.close_all()
    errors: list[str] = []
    barrier = threading.Barrier(len(users))

    def editor(user) -> None:
        try:
            client = Client(raise_request_exception=False)
            client.force_login(user)
            barrier.wait(timeout=30)
            for i in range(int(os.environ.get("SAVES", "20"))):
                turn = turns[i % len(turns)]
                for url, data in (
                    (reverse("annotations:lease", args=[turn.pk]), {}),
                    (
                        reverse("annotations:edit", args=[turn.pk]),
                        {"base_version": 1, "answer_en": f"draft {i} by {user.username}", "draft": "1"},
                    ),
                ):
                    response = client.post(url, data)
                    if response.status_code >= 500:
                        errors.append(f"{url} {response.status_code}")
        except Exception as exc:  # every failure is reported
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=editor, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    print(json.dumps({"errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
