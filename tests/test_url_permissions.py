"""Every URL of physreview.urls, walked anonymously and as reviewer / adjudicator / admin.

The expected status of each (URL, sample object) per role is written out below: app pages send
anonymous users to the login page, the Django admin sends everyone but staff to the admin login,
and reviewers get a 404 for turns of sessions not assigned to them and for the adjudication screen.
A new URL pattern fails :func:`test_every_pattern_has_an_expectation` until it is added here.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import URLResolver, get_resolver, reverse
from rest_framework.authtoken.models import Token

from annotations import services
from annotations.models import Adjudication, Comment, Guideline, Review, TurnState
from annotations.snapshots.services import create_snapshot
from ehr.models import Admission
from evaluation.models import CalibrationItem, CalibrationSample, EvalRun, TurnResult
from tests.annotations.conftest import make_user
from tests.scenarios.factories import GenerationRunFactory, complete_session

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "reviewer", "adjudicator", "admin")
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
API_ACTIONS = ("approve", "reject", "edit")

# (URL name or route, sample) -> expected GET outcome for (anonymous, reviewer, adjudicator, admin).
# Samples: "assigned" = a turn of the reviewer's session awaiting adjudication; "unassigned" = a turn of
# a session nobody is assigned to (in draft); "admission" = an admission of the demo cohort.
APP_EXPECTED: dict[tuple[str, str | None], tuple] = {
    ("", None): (("redirect", "/ehr/patients/"),) * 4,
    ("login", None): (200, 200, 200, 200),
    ("logout", None): (405, 405, 405, 405),  # POST only
    ("set_language", None): (("redirect", "/"),) * 4,  # a GET changes nothing and goes back (POST sets it)
    ("ehr:patient_list", None): (LOGIN, 200, 200, 200),
    ("ehr:admission_detail", "admission"): (LOGIN, 200, 200, 200),
    ("annotations:queue", None): (LOGIN, 200, 200, 200),
    ("annotations:turn", "assigned"): (LOGIN, 200, 200, 200),
    ("annotations:turn", "unassigned"): (LOGIN, 404, 200, 200),
    **{(name, sample): (LOGIN, 405, 405, 405) for name in ACTIONS for sample in ("assigned", "unassigned")},
    ("annotations:adjudicate", "assigned"): (LOGIN, 404, 200, 200),
    ("annotations:adjudicate", "unassigned"): (LOGIN, 404, 404, 404),  # not awaiting adjudication
    # A step's raw observation needs ?step=<idx> (400 without it), after the turn's visibility check (404).
    ("annotations:step_raw", "assigned"): (LOGIN, 400, 400, 400),
    ("annotations:step_raw", "unassigned"): (LOGIN, 404, 400, 400),
    ("annotations:history", "assigned"): (LOGIN, 200, 200, 200),
    ("annotations:history", "unassigned"): (LOGIN, 404, 200, 200),
    ("annotations:dashboard", None): (LOGIN, 200, 200, 200),
    ("snapshots:download", "snapshot_file"): (LOGIN, 403, 403, 200),  # staff only
    # REST API: 401 instead of the login page; the same object visibility as the review screens (404).
    ("api:api-root", None): (401, 200, 200, 200),
    ("api:schema", None): (200, 200, 200, 200),
    ("api:docs", None): (200, 200, 200, 200),
    ("api:session-list", None): (401, 200, 200, 200),
    ("api:session-detail", "api_session_assigned"): (401, 200, 200, 200),
    ("api:session-detail", "api_session_unassigned"): (401, 404, 200, 200),
    ("api:turn-list", None): (401, 200, 200, 200),
    ("api:turn-detail", "assigned"): (401, 200, 200, 200),
    ("api:turn-detail", "unassigned"): (401, 404, 200, 200),
    **{(f"api:turn-{a}", s): (401, 405, 405, 405) for a in API_ACTIONS for s in ("assigned", "unassigned")},
    ("api:snapshot-list", None): (401, 403, 200, 200),  # adjudicators and admins only
    ("api:snapshot-detail", "snapshot"): (401, 403, 200, 200),
    ("api:snapshot-file", "snapshot_file"): (401, 403, 200, 200),
    ("api:run-list", None): (401, 200, 200, 200),  # every logged-in role reads results
    ("api:run-detail", "eval_run"): (401, 200, 200, 200),
    ("api:run-turn-list", "api_run_turns"): (401, 200, 200, 200),
    ("api/^.*$", None): (404, 404, 404, 404),  # any other path under /api/: the API's JSON 404
    # Results: every logged-in role (compare without ?a=&b= is a 400 asking for two runs).
    ("evaluation:leaderboard", None): (LOGIN, 200, 200, 200),
    ("evaluation:leaderboard_download", "leaderboard_csv"): (LOGIN, 200, 200, 200),
    ("evaluation:compare", None): (LOGIN, 400, 400, 400),
    ("evaluation:run", "eval_run"): (LOGIN, 200, 200, 200),
    ("evaluation:run_download", "eval_run_csv"): (LOGIN, 200, 200, 200),
    ("evaluation:turns", "eval_run"): (LOGIN, 200, 200, 200),
    ("evaluation:turn", "eval_turn"): (LOGIN, 200, 200, 200),
    # Judge calibration: everyone signed in grades (blind) and reads the agreement; POST-only actions.
    ("evaluation:calibration_index", None): (LOGIN, 200, 200, 200),
    ("evaluation:calibration_draw", None): (LOGIN, 405, 405, 405),
    ("evaluation:calibration_next", "calibration_sample"): (
        LOGIN,
        ("redirect", "/answers/"),
        ("redirect", "/answers/"),
        ("redirect", "/answers/"),
    ),
    ("evaluation:calibration_grade", "calibration_answer"): (LOGIN, 200, 200, 200),
    ("evaluation:calibration_save", "calibration_answer"): (LOGIN, 405, 405, 405),
    ("evaluation:calibration_agreement", None): (LOGIN, 200, 200, 200),
}

# POST to the actions of a turn the reviewer is not assigned to.
POST_EXPECTED: dict[str, tuple] = {
    **{name: (LOGIN, 404, 200, 200) for name in ACTIONS},  # adjudicators get a banner (or a comment)
    "annotations:adjudicate": (LOGIN, 404, 200, 200),  # banner: the turn does not need adjudication
    # API: 404 before the body is read; this form post is then refused (the API takes JSON only).
    **{f"api:turn-{a}": (401, 404, 415, 415) for a in API_ACTIONS},
}

NON_STAFF_ADMIN = (ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN)
# Django admin: every page is for staff only; these are the exceptions to (ADMIN_LOGIN ×3, 200).
ADMIN_EXCEPTIONS: dict[str, tuple] = {
    "admin:login": (200, 200, 200, ("redirect", "/admin/")),
    "admin:logout": (("redirect", "/admin/"),) * 3 + (405,),  # POST only
    "admin:autocomplete": (*NON_STAFF_ADMIN, 403),  # needs app_label/model_name/field_name
    "admin:view_on_site": (*NON_STAFF_ADMIN, 404),  # turns have no public page
    "<object>": (*NON_STAFF_ADMIN, ("redirect", "/change/")),  # admin/<model>/<id>/ → its change page
    "<catch-all>": (*NON_STAFF_ADMIN, 404),
    # Snapshots are immutable: made by the "Create snapshot" page, never added, changed or deleted.
    "admin:annotations_snapshot_add": (*NON_STAFF_ADMIN, 403),
    "admin:annotations_snapshot_delete": (*NON_STAFF_ADMIN, 403),
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
    adjudicator = make_user("adj", "adjudicator")
    admin = make_user("root", "admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    GenerationRunFactory()  # every admin model has a row to open
    eval_run = EvalRun.objects.create(model="rules:oracle")
    eval_turn = TurnResult.objects.create(
        run=eval_run,
        session_id="s",
        turn_index=0,
        language="en",
        variant="implicit",
        scenario="med_safety",
        tier=1,
        task_type="IL",
        tool_source="ehr",
    )
    calibration = CalibrationSample.objects.create(name="cal")
    CalibrationItem.objects.create(sample=calibration, turn_result=eval_turn, item=0, stratum="IL/en/pass", position=0)
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
    settings.VAR_DIR = tmp_path  # snapshot files
    approved = complete_session()
    approved.turns.update(status=TurnState.APPROVED)
    create_snapshot(user=admin)
    return {
        "users": {"anonymous": None, "reviewer": reviewers[0], "adjudicator": adjudicator, "admin": admin},
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
