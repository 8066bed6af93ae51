"""Property-based API test: schemathesis generates requests for every operation of the live OpenAPI
schema and sends them to a live server with a token; no response may be a server error (5xx).

Each operation is exercised with schema-valid data (random ids, and ids pinned to real objects so the
review actions and downloads reach the services) and with schema-violating data. The number of
examples is capped to keep the run short; generation is derandomized so a failure reproduces.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis.generation.modes import GenerationMode

from annotations import services
from annotations.snapshots import services as snapshot_services
from tests.annotations.api.conftest import token_client
from tests.annotations.snapshots.conftest import approve_by_review

# Hypothesis keeps caches (charmap, constants) in ./.hypothesis by default: not in the working tree.
set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "physreview-hypothesis"))

EXAMPLES = 10
# Each accepted POST /api/snapshots/ builds a whole snapshot (files, checksums, card): fewer of those.
EXAMPLES_PER_OPERATION = {"POST /api/snapshots/": 4}


@pytest.fixture
def live_world(world, live_server, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    users = world["users"]
    approve_by_review(session=world["b"], reviewers=[users["rev2"], users["rev3"]], by=users["admin"])
    snapshot_services.create_snapshot(user=users["admin"])
    turn = world["a"].turns.get(index=1)
    services.save_draft_review(turn=turn, reviewer=users["rev1"], proposed={"answer_en": "draft"})
    return world


def _pinned(path: str, world) -> dict[str, object]:
    params: dict[str, object] = {}
    if "{id}" in path:
        params["id"] = world["a"].pk if path.startswith("/api/sessions/") else world["a"].turns.get(index=1).pk
    if "{label}" in path:
        params["label"] = "latest"
    if "{name}" in path:
        params["name"] = "SHA256SUMS"
    return params


def _run(
    strategy, mode, *, examples: int, base_url: str, headers: dict[str, str], failures: list[str], seen: Counter
) -> int:
    sent = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    @given(case=strategy)
    def check(case):
        nonlocal sent
        response = case.call(base_url=base_url, headers=headers, timeout=30)
        sent += 1
        seen[(f"{case.method} {case.operation.path}", response.status_code // 100)] += 1
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path} → {response.status_code}: {case.as_curl_command()}")

    try:
        check()
    except Unsatisfiable:
        # Negative mode: an operation whose inputs leave nothing to violate (e.g. only a free-form path).
        if mode is not GenerationMode.NEGATIVE:
            raise
    return sent


@pytest.mark.slow
def test_no_server_errors_for_any_operation(live_world, live_server):
    users = live_world["users"]
    tokens = {name: Token.objects.get_or_create(user=users[name])[0].key for name in ("admin", "rev1")}
    assert token_client(users["admin"]).get("/api/snapshots/latest/").json()["status"] == "ready"
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json", timeout=30)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10, [op.label for op in operations]
    failures: list[str] = []
    seen: Counter = Counter()
    sent = 0
    started = time.monotonic()
    for operation in operations:
        label = f"{operation.method.upper()} {operation.path}"
        runs = [("admin", GenerationMode.POSITIVE, {}), ("admin", GenerationMode.NEGATIVE, {})]
        if pinned := _pinned(operation.path, live_world):
            runs.append(("admin", GenerationMode.POSITIVE, pinned))
            if label.startswith("POST /api/turns/"):
                # Review actions as the assigned reviewer too: their path goes through submit/draft.
                runs.append(("rev1", GenerationMode.POSITIVE, pinned))
        for user, mode, path_parameters in runs:
            strategy = operation.as_strategy(mode, path_parameters=path_parameters or None)
            sent += _run(
                strategy,
                mode,
                examples=EXAMPLES_PER_OPERATION.get(label, EXAMPLES),
                base_url=live_server.url,
                headers={"Authorization": f"Token {tokens[user]}"},
                failures=failures,
                seen=seen,
            )
    elapsed = time.monotonic() - started
    print(f"schemathesis: {sent} requests over {len(operations)} operations in {elapsed:.1f}s; {dict(seen)}")
    assert not failures, "server errors:\n" + "\n".join(failures)
    assert sent >= 8 * len(operations)
    # The generated requests reached real objects, not only 404s and 400s.
    assert all(seen[(f"GET {path}", 2)] for path in ("/api/turns/", "/api/turns/{id}/", "/api/sessions/{id}/"))
    assert seen[("GET /api/snapshots/{label}/files/{name}/", 2)]
