"""Trace: what the review screen's edit view itself calls on one reviewer draft save (issue 34's thin views).

    .venv/bin/python manage.py demo --no-serve      # once: the demo's users and sessions
    .venv/bin/python bench/trace_review_edit.py

Signs in as ``demo_reviewer`` (Django's test client, no server), opens the first turn of their queue, posts a
draft save of a changed English answer as the htmx editor does, under cProfile, and prints the functions the
view ``annotations.views.actions.edit`` calls directly with their cumulative times: request parsing, one
service entry (``screen_actions.save_edit``) and one render (``_render``). Exits non-zero when the save did
not answer "Draft saved." or when the view calls the review services more than once.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")


def main() -> int:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotations import selectors

    user = get_user_model().objects.filter(username="demo_reviewer").first()
    if user is None:
        print("no demo_reviewer: run `manage.py demo --no-serve` first", file=sys.stderr)
        return 2
    turn = selectors.review_queue(user=user).first()
    if turn is None:
        print("demo_reviewer has no turn left to review", file=sys.stderr)
        return 2
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    client.get(f"/review/turns/{turn.pk}/")  # warm: templates compiled, caches filled
    data = {"base_version": turn.version, "answer_en": f"{turn.answer_en} (checked)", "draft": "1"}
    profile = cProfile.Profile()
    profile.enable()
    response = client.post(f"/review/turns/{turn.pk}/edit/", data, HTTP_HX_REQUEST="true")
    profile.disable()
    saved = response.status_code == 200 and "Draft saved." in response.content.decode()
    stats = pstats.Stats(profile)
    view = next(key for key in stats.stats if key[0].endswith("annotations/views/actions.py") and key[2] == "edit")
    callees = [(key, value) for key, value in stats.stats.items() if view in value[4]]
    print(f"POST /review/turns/{turn.pk}/edit/ → {response.status_code}, draft saved: {saved}")
    print("the view calls (calls, cumulative ms):")
    service_calls = 0
    for (path, line, name), (_cc, _nc, _tt, _ct, callers) in sorted(callees, key=lambda kv: -kv[1][4][view][3]):
        calls, _prim, _tot, cum = callers[view]
        short = "django …/" + Path(path).name if "/site-packages/" in path else Path(path).relative_to(ROOT)
        print(f"  {calls:>2} × {cum * 1000:7.1f} ms  {short}:{line} {name}")
        if "/annotations/services/" in path:
            service_calls += calls
    print(f"review service entries called by the view: {service_calls}")
    return 0 if saved and service_calls == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
