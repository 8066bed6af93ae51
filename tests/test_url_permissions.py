"""Every URL of physreview.urls, walked anonymously, as a user with no role, reviewer, adjudicator and admin.

The expected status of each (URL, sample object) per role is written out below, as docs/operations.md (access) and
the table in physreview/access.py state it: app pages send anonymous users to the login page and
refuse (403) a signed-in user with no role, the Django admin sends everyone but staff to the admin
login, and reviewers get a 404 for turns (review screens and results drill-down) of sessions not
assigned to them and for the adjudication screen. A new URL pattern fails
:func:`test_every_pattern_has_an_expectation` until it is added here, and
:func:`test_every_pattern_has_an_access_rule` until physreview/access.py has a rule for it.
"""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.urls import URLResolver, get_resolver, reverse
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny

from annotations import services
from annotations.models import Adjudication, Comment, Guideline, Review, TurnState
from annotations.snapshots.services import create_snapshot
from ehr.models import Admission
from evaluation.models import (
    CalibrationItem,
    CalibrationSample,
    EvalRun,
    JudgeCertification,
    PhysicianGrade,
    TurnResult,
)
from physreview import access
from tests.annotations.conftest import approve_as_is, make_user
from tests.evaluation.factories import turn_result
from tests.scenarios.factories import GenerationRunFactory, complete_session

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "norole", "reviewer", "adjudicator", "admin")
LOGIN = ("redirect", "/accounts/login/")  # app pages: the login page, with ?next=
ADMIN_LOGIN = ("redirect", "/admin/login/")  # Django admin: the admin login, with ?next=
ACTIONS = (
    "annotations:approve",
    "annotations:reject",
    "annotations:comment",
    "annotations:edit",
    "annotations:merge",
    "annotations:lease",
    "annotations:release_lease",
)
API_ACTIONS = ("approve", "reject", "edit", "confirm", "revert")
ROLE_ONLY = 403  # a signed-in user with no role (physreview.access: Rule.ROLE and stricter)

# (URL name or route, sample) -> expected GET outcome for (anonymous, no role, reviewer, adjudicator, admin).
# Samples: "assigned" = a turn of the reviewer's session awaiting adjudication; "unassigned" = a turn of
# a session nobody is assigned to (in draft); "admission" = an admission of the demo cohort; the eval
# turns are results of a run on those two sessions.
APP_EXPECTED: dict[tuple[str, str | None], tuple] = {
    # Each role's start page (annotations.roles.start_page_for); a user with no role is told so (200).
    ("home", None): (
        LOGIN,
        200,
        ("redirect", "/review/"),
        ("redirect", "/review/#adjudication-queue"),
        ("redirect", "/review/dashboard/"),
    ),
    ("login", None): (200, 200, 200, 200, 200),
    ("logout", None): (405, 405, 405, 405, 405),  # POST only
    ("set_language", None): (("redirect", "/"),) * 5,  # a GET changes nothing and goes back (POST sets it)
    ("ehr:patient_list", None): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("ehr:admission_detail", "admission"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("annotations:queue", None): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("annotations:turn", "assigned"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("annotations:turn", "unassigned"): (LOGIN, ROLE_ONLY, 404, 200, 200),
    **{(name, sample): (LOGIN, ROLE_ONLY, 405, 405, 405) for name in ACTIONS for sample in ("assigned", "unassigned")},
    ("annotations:adjudicate", "assigned"): (LOGIN, ROLE_ONLY, 404, 200, 200),
    ("annotations:adjudicate", "unassigned"): (LOGIN, ROLE_ONLY, 404, 404, 404),  # not awaiting adjudication
    # A step's raw observation needs ?step=<idx> (400 without it), after the turn's visibility check (404).
    ("annotations:step_raw", "assigned"): (LOGIN, ROLE_ONLY, 400, 400, 400),
    ("annotations:step_raw", "unassigned"): (LOGIN, ROLE_ONLY, 404, 400, 400),
    ("annotations:history", "assigned"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("annotations:history", "unassigned"): (LOGIN, ROLE_ONLY, 404, 200, 200),
    ("annotations:dashboard", None): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("annotations:done", None): (LOGIN, ROLE_ONLY, 200, 200, 200),  # the user's own submitted reviews
    **{("annotations:undo", s): (LOGIN, ROLE_ONLY, 405, 405, 405) for s in ("assigned", "unassigned")},  # POST only
    # Throw away one's own draft (issue 35): POST only.
    **{("annotations:discard_draft", s): (LOGIN, ROLE_ONLY, 405, 405, 405) for s in ("assigned", "unassigned")},
    # Confirm or revert an edit of an approved turn (issue 32): POST only.
    **{("annotations:confirm", s): (LOGIN, ROLE_ONLY, 405, 405, 405) for s in ("assigned", "unassigned")},
    ("snapshots:download", "snapshot_file"): (LOGIN, 403, 403, 403, 200),  # staff only
    # REST API: 401 instead of the login page; the same object visibility as the review screens (404).
    ("api:api-root", None): (401, ROLE_ONLY, 200, 200, 200),
    ("api:schema", None): (200, 200, 200, 200, 200),
    ("api:docs", None): (200, 200, 200, 200, 200),
    ("api:session-list", None): (401, ROLE_ONLY, 200, 200, 200),
    ("api:session-detail", "api_session_assigned"): (401, ROLE_ONLY, 200, 200, 200),
    ("api:session-detail", "api_session_unassigned"): (401, ROLE_ONLY, 404, 200, 200),
    ("api:turn-list", None): (401, ROLE_ONLY, 200, 200, 200),
    ("api:turn-detail", "assigned"): (401, ROLE_ONLY, 200, 200, 200),
    ("api:turn-detail", "unassigned"): (401, ROLE_ONLY, 404, 200, 200),
    **{(f"api:turn-{a}", s): (401, ROLE_ONLY, 405, 405, 405) for a in API_ACTIONS for s in ("assigned", "unassigned")},
    ("api:snapshot-list", None): (401, 403, 403, 200, 200),  # adjudicators and admins only
    ("api:snapshot-detail", "snapshot"): (401, 403, 403, 200, 200),
    ("api:snapshot-file", "snapshot_file"): (401, 403, 403, 200, 200),
    ("api:snapshot-resume", "snapshot"): (401, 403, 403, 405, 405),  # POST only (issue 36, F4)
    ("api:run-list", None): (401, ROLE_ONLY, 200, 200, 200),  # every role reads results
    ("api:run-detail", "eval_run"): (401, ROLE_ONLY, 200, 200, 200),
    ("api:run-turn-list", "api_run_turns"): (401, ROLE_ONLY, 200, 200, 200),  # rows scoped: see below
    ("api/^.*$", None): (404, 404, 404, 404, 404),  # any other path under /api/: the API's JSON 404
    # Results: every role (compare without ?a=&b= is a 400 asking for two runs).
    ("evaluation:leaderboard", None): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:leaderboard_download", "leaderboard_csv"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:compare", None): (LOGIN, ROLE_ONLY, 400, 400, 400),
    ("evaluation:run", "eval_run"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:run_download", "eval_run_csv"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:turns", "eval_run"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    # The drill-down shows the gold answer: a reviewer opens only the turns of their own sessions.
    ("evaluation:turn", "eval_turn"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:turn", "eval_turn_other"): (LOGIN, ROLE_ONLY, 404, 200, 200),
    # A physician's fault attribution of a turn (issue 38): POST only, same visibility as the drill-down.
    **{("evaluation:turn_fault", s): (LOGIN, ROLE_ONLY, 405, 405, 405) for s in ("eval_turn", "eval_turn_other")},
    # Judge calibration: every role grades (blind) and reads the agreement; POST-only actions.
    ("evaluation:calibration_index", None): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:calibration_draw", None): (LOGIN, 403, 403, 405, 405),  # adjudicators and admins draw
    ("evaluation:calibration_next", "calibration_sample"): (
        LOGIN,
        ROLE_ONLY,
        ("redirect", "/answers/"),
        ("redirect", "/answers/"),
        ("redirect", "/answers/"),
    ),
    ("evaluation:calibration_grade", "calibration_answer"): (LOGIN, ROLE_ONLY, 200, 200, 200),
    ("evaluation:calibration_save", "calibration_answer"): (LOGIN, ROLE_ONLY, 405, 405, 405),
    ("evaluation:calibration_agreement", None): (LOGIN, ROLE_ONLY, 200, 200, 200),
}

# POST to the actions of a turn the reviewer is not assigned to.
POST_EXPECTED: dict[str, tuple] = {
    **{name: (LOGIN, ROLE_ONLY, 404, 200, 200) for name in ACTIONS},  # adjudicators get a banner (or a comment)
    "annotations:adjudicate": (LOGIN, ROLE_ONLY, 404, 200, 200),  # banner: the turn does not need adjudication
    # Nothing of theirs to withdraw: back to the done list with the reason.
    "annotations:undo": (LOGIN, ROLE_ONLY, 404, ("redirect", "/review/done/"), ("redirect", "/review/done/")),
    # No draft of theirs to discard: nothing happens, the turn is loaded again (HX-Redirect, 204).
    "annotations:discard_draft": (LOGIN, ROLE_ONLY, 404, 204, 204),
    # The turn has no edit waiting for confirmation: back to the queue with the reason.
    "annotations:confirm": (LOGIN, ROLE_ONLY, 404, ("redirect", "/review/"), ("redirect", "/review/")),
    # API: 404 before the body is read; this form post is then refused (the API takes JSON only).
    **{f"api:turn-{a}": (401, ROLE_ONLY, 404, 415, 415) for a in API_ACTIONS},
}

NON_STAFF_ADMIN = (ADMIN_LOGIN,) * 4
# Django admin: every page is for staff only; these are the exceptions to (ADMIN_LOGIN ×4, 200).
ADMIN_EXCEPTIONS: dict[str, tuple] = {
    "admin:login": (200, 200, 200, 200, ("redirect", "/admin/")),
    "admin:logout": (("redirect", "/admin/"),) * 4 + (405,),  # POST only
    "admin:autocomplete": (*NON_STAFF_ADMIN, 403),  # needs app_label/model_name/field_name
    "admin:view_on_site": (*NON_STAFF_ADMIN, 404),  # turns have no public page
    "<object>": (*NON_STAFF_ADMIN, ("redirect", "/change/")),  # admin/<model>/<id>/ → its change page
    "<catch-all>": (*NON_STAFF_ADMIN, 404),
    # Snapshots are immutable: made by the "Create snapshot" page, never added, changed or deleted.
    "admin:annotations_snapshot_add": (*NON_STAFF_ADMIN, 403),
    "admin:annotations_snapshot_delete": (*NON_STAFF_ADMIN, 403),
    # Resume a failed or stalled build: POST only; a GET goes back to the snapshot's page.
    "admin:annotations_snapshot_resume": (*NON_STAFF_ADMIN, ("redirect", "/change/")),
    # Turns are view-only in the admin: content changes go through the review services (versioned).
    "admin:scenarios_turn_add": (*NON_STAFF_ADMIN, 403),
}
ADMIN_DEFAULT = (*NON_STAFF_ADMIN, 200)
# The imported record is read-only in the admin: even superusers may not add or delete its rows.
EHR_ADD_DELETE = re.compile(r"^admin:ehr_\w+_(add|delete)$|^admin:evaluation_\w+_(add|delete)$")  # runs: records
ADMIN_READ_ONLY = (*NON_STAFF_ADMIN, 403)


def _walk(patterns, prefix="", ns=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, prefix + str(p.pattern), f"{ns}{p.namespace}:" if p.namespace else ns)
        else:
            yield prefix + str(p.pattern), (ns + p.name) if p.name else None, p


def _patterns():
    return list(_walk(get_resolver("physreview.urls").url_patterns))


@pytest.fixture
def world(demo_cohort, settings, tmp_path):
    reviewers = [make_user(f"rev{i}", "reviewer") for i in (1, 2)]
    norole = get_user_model().objects.create_user(username="norole", password="x")
    adjudicator = make_user("adj", "adjudicator")
    admin = make_user("root", "admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    GenerationRunFactory()  # every admin model has a row to open
    eval_run = EvalRun.objects.create(model="rules:oracle")
    Token.objects.create(user=admin)  # API tokens (rest_framework.authtoken's admin)
    Guideline.objects.create(language="en", title="Guide", body_markdown="Check the record.")
    assigned = complete_session()
    for reviewer in reviewers[:2]:
        services.assign(session=assigned, reviewer=reviewer, by=admin)
    disputed = assigned.turns.get(index=0)
    for reviewer, decision in ((reviewers[0], "approve"), (reviewers[1], "reject")):
        disputed.refresh_from_db()
        services.submit_review(
            turn=disputed, reviewer=reviewer, decision=decision, reject_reason="unsafe", base_version=disputed.version
        )
    disputed.refresh_from_db()
    assert disputed.status == TurnState.NEEDS_ADJUDICATION
    unassigned = complete_session().turns.get(index=0)
    eval_turn, eval_turn_other = (
        turn_result(run=eval_run, session_id=session_id)
        for session_id in (assigned.session_id, unassigned.session.session_id)
    )
    calibration = CalibrationSample.objects.create(name="cal")
    CalibrationItem.objects.create(sample=calibration, turn_result=eval_turn, item=0, stratum="IL/en/pass", position=0)
    JudgeCertification.objects.create(
        judge="rules", threshold=0.8, certified=False, n=0, n_positive=0, n_negative=0, data_count=0, data_hash="0" * 64
    )
    settings.VAR_DIR = tmp_path  # snapshot files
    approved = complete_session()
    approve_as_is(approved.turns.all())
    create_snapshot(user=admin)
    return {
        "users": {
            "anonymous": None,
            "norole": norole,
            "reviewer": reviewers[0],
            "adjudicator": adjudicator,
            "admin": admin,
        },
        "samples": {
            "assigned": {"pk": disputed.pk},
            "unassigned": {"pk": unassigned.pk},
            "admission": {"hadm_id": Admission.objects.order_by("hadm_id").first().hadm_id},
            "snapshot_file": {"label": "v1", "name": "turns.jsonl"},
            "snapshot": {"label": "v1"},
            "api_session_assigned": {"pk": assigned.pk},
            "api_session_unassigned": {"pk": unassigned.session_id},
            "eval_run": {"pk": eval_run.pk},
            "api_run_turns": {"run_pk": eval_run.pk},
            "eval_run_csv": {"pk": eval_run.pk, "fmt": "csv"},
            "eval_turn": {"pk": eval_run.pk, "result_pk": eval_turn.pk},
            "eval_turn_other": {"pk": eval_run.pk, "result_pk": eval_turn_other.pk},
            "leaderboard_csv": {"fmt": "csv"},
            "calibration_sample": {"pk": calibration.pk},
            "calibration_answer": {"pk": calibration.pk, "turn_result": eval_turn.pk},
            None: {},
        },
        "turn": disputed,
    }


def _outcome(response):
    if response.status_code == 302:
        return ("redirect", response["Location"])
    return response.status_code


def _matches(outcome, expected) -> bool:
    if isinstance(expected, tuple):
        return (
            isinstance(outcome, tuple)
            and expected[1] in outcome[1]
            and (expected[1] != "/admin/" or outcome[1] == "/admin/")
        )
    return outcome == expected


def _admin_url(route, name, pattern, world) -> tuple[str, str]:
    """The URL to request for an admin pattern and the key of its expectation."""
    turn = world["turn"]
    if name is None and "object_id" in route:
        obj = pattern.callback.model_admin.model._default_manager.order_by("pk").first()
        return "/" + route.replace("<path:object_id>", str(obj.pk)), "<object>"
    if name is None:
        return "/admin/no-such-page/", "<catch-all>"
    if name == "admin:view_on_site":
        ct = ContentType.objects.get_for_model(type(turn))
        return reverse(name, kwargs={"content_type_id": ct.pk, "object_id": turn.pk}), name
    if name == "admin:app_list":
        return reverse(name, kwargs={"app_label": "scenarios"}), name
    if name == "admin:auth_user_password_change":
        return reverse(name, kwargs={"id": world["users"]["reviewer"].pk}), name
    if "object_id" in route:
        obj = pattern.callback.model_admin.model._default_manager.order_by("pk").first()
        assert obj is not None, f"no sample object for {name}"
        return reverse(name, kwargs={"object_id": obj.pk}), name
    return reverse(name), name


def _cases(world):
    """(url, label, expected per role) for every pattern: app URLs from APP_EXPECTED, admin ones by rule."""
    cases = []
    for route, name, pattern in _patterns():
        if route.startswith("admin/"):
            url, key = _admin_url(route, name, pattern, world)
            default = ADMIN_READ_ONLY if EHR_ADD_DELETE.match(key) else ADMIN_DEFAULT
            cases.append((url, key, ADMIN_EXCEPTIONS.get(key, default)))
            continue
        key = name if name is not None else route
        for (expected_key, sample), expected in APP_EXPECTED.items():
            if expected_key == key:
                url = reverse(name, kwargs=world["samples"][sample]) if name else "/" + route
                cases.append((url, f"{key} [{sample}]", expected))
    return cases


def test_every_pattern_has_an_expectation():
    app_keys = {key for key, _ in APP_EXPECTED}
    for route, name, _ in _patterns():
        if not route.startswith("admin/"):
            assert (name if name is not None else route) in app_keys, f"no expectation for {route!r} ({name})"
    assert {key for key, _ in APP_EXPECTED} <= {n if n is not None else r for r, n, _ in _patterns()}


def test_get_every_url_per_role(client, world):
    cases = _cases(world)
    assert len(cases) > len(APP_EXPECTED)
    failures = []
    for index, role in enumerate(ROLES):
        user = world["users"][role]
        client.logout()
        if user is not None:
            client.force_login(user)
        for url, label, expected in cases:
            outcome = _outcome(client.get(url))
            if not _matches(outcome, expected[index]):
                failures.append(f"{role} GET {url} ({label}): {outcome!r}, expected {expected[index]!r}")
    assert not failures, "\n".join(failures)


def test_post_actions_on_unassigned_turn_per_role(client, world):
    pk = world["samples"]["unassigned"]["pk"]
    failures = []
    for index, role in enumerate(ROLES):
        user = world["users"][role]
        client.logout()
        if user is not None:
            client.force_login(user)
        for name, expected in POST_EXPECTED.items():
            data = {"base_version": 1, "chosen": "a", "text": "note", "reject_reason": "unsafe"}
            outcome = _outcome(client.post(reverse(name, args=[pk]), data))
            if not _matches(outcome, expected[index]):
                failures.append(f"{role} POST {name}: {outcome!r}, expected {expected[index]!r}")
    assert not failures, "\n".join(failures)
    # Nothing was written for the turn by anyone refused; the adjudicator's and admin's comments stay.
    assert sorted(Comment.objects.filter(turn_id=pk).values_list("author__username", flat=True)) == ["adj", "root"]
    assert not Review.objects.filter(turn_id=pk).exists() and not Adjudication.objects.filter(turn_id=pk).exists()


def test_every_pattern_has_an_access_rule():
    """Every route resolves to a row of physreview.access.RULES (unnamed routes by their view's path)."""
    missing = []
    for route, name, pattern in _patterns():
        if name is None:
            callback = pattern.callback
            cls = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
            target = cls or callback
            name = f"{target.__module__}.{target.__qualname__}"
            ns = route.split("/", 1)[0]
            name = f"{ns}:{name}" if ns in ("api", "admin") else name
        try:
            access.rule_for(view_name=name)
        except LookupError:
            missing.append(f"{route} ({name})")
    assert not missing, "no access rule for: " + ", ".join(missing)


def test_every_api_view_enforces_the_table():
    """API views carry RoleTablePermission (DRF authenticates tokens after middleware runs)."""
    for route, _name, pattern in _patterns():
        cls = getattr(pattern.callback, "cls", None)
        if route.startswith("api/") and cls is not None:
            assert access.RoleTablePermission in cls.permission_classes, route


def test_an_api_view_without_the_table_permission_is_refused(client, world, monkeypatch):
    from annotations.api.views import SessionViewSet

    monkeypatch.setattr(SessionViewSet, "permission_classes", [AllowAny])
    client.force_login(world["users"]["admin"])
    response = client.get(reverse("api:session-list"))
    assert response.status_code == 403
    assert "does not enforce physreview.access" in response.json()["error"]["message"]


def test_a_route_without_a_rule_is_refused(client, world, monkeypatch):
    monkeypatch.setattr(access, "RULES", tuple(a for a in access.RULES if "ehr:*" not in a.views))
    client.force_login(world["users"]["admin"])
    response = client.get(reverse("ehr:patient_list"))
    assert response.status_code == 403
    assert "no access rule for the view 'ehr:patient_list'" in html.unescape(response.content.decode())


def test_no_role_gets_a_page_naming_the_problem(client, world):
    client.force_login(world["users"]["norole"])
    response = client.get(reverse("evaluation:leaderboard"))
    assert response.status_code == 403
    assert "has no role" in response.content.decode()
    api = client.get(reverse("api:run-list"))
    assert api.status_code == 403 and "has no role" in api.json()["error"]["message"]


def test_no_role_cannot_save_a_calibration_grade(client, world):
    sample = world["samples"]["calibration_answer"]
    client.force_login(world["users"]["norole"])
    response = client.post(reverse("evaluation:calibration_save", kwargs=sample), {"item": 0, "label": "pass"})
    assert response.status_code == 403
    assert not PhysicianGrade.objects.exists()


def test_reviewer_drill_down_lists_only_assigned_sessions(client, world):
    """Another session's turn (and with it its gold answer) stays out of the list, the page and the API."""
    run_pk = world["samples"]["eval_run"]["pk"]
    other = TurnResult.objects.get(pk=world["samples"]["eval_turn_other"]["result_pk"])
    mine = TurnResult.objects.get(pk=world["samples"]["eval_turn"]["result_pk"])
    client.force_login(world["users"]["reviewer"])
    page = client.get(reverse("evaluation:turns", kwargs={"pk": run_pk})).content.decode()
    assert mine.session_id in page and other.session_id not in page
    api = client.get(reverse("api:run-turn-list", kwargs={"run_pk": run_pk})).json()
    assert [row["session_id"] for row in api["results"]] == [mine.session_id]
    client.force_login(world["users"]["adjudicator"])
    api = client.get(reverse("api:run-turn-list", kwargs={"run_pk": run_pk})).json()
    assert {row["session_id"] for row in api["results"]} == {mine.session_id, other.session_id}
