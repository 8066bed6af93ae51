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

from annotations import services
from annotations.models import Adjudication, Comment, Review, TurnState
from ehr.models import Admission
from tests.annotations.conftest import make_user
from tests.scenarios.factories import GenerationRunFactory, complete_session

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "reviewer", "adjudicator", "admin")
LOGIN = ("redirect", "/accounts/login/")  # app pages: the login page, with ?next=
ADMIN_LOGIN = ("redirect", "/admin/login/")  # Django admin: the admin login, with ?next=
ACTIONS = ("annotations:approve", "annotations:reject", "annotations:comment", "annotations:edit")

# (URL name or route, sample) -> expected GET outcome for (anonymous, reviewer, adjudicator, admin).
# Samples: "assigned" = a turn of the reviewer's session awaiting adjudication; "unassigned" = a turn of
# a session nobody is assigned to (in draft); "admission" = an admission of the demo cohort.
APP_EXPECTED: dict[tuple[str, str | None], tuple] = {
    ("", None): (("redirect", "/ehr/patients/"),) * 4,
    ("login", None): (200, 200, 200, 200),
    ("logout", None): (405, 405, 405, 405),  # POST only
    ("ehr:patient_list", None): (LOGIN, 200, 200, 200),
    ("ehr:admission_detail", "admission"): (LOGIN, 200, 200, 200),
    ("annotations:queue", None): (LOGIN, 200, 200, 200),
    ("annotations:turn", "assigned"): (LOGIN, 200, 200, 200),
    ("annotations:turn", "unassigned"): (LOGIN, 404, 200, 200),
    **{(name, sample): (LOGIN, 405, 405, 405) for name in ACTIONS for sample in ("assigned", "unassigned")},
    ("annotations:adjudicate", "assigned"): (LOGIN, 404, 200, 200),
    ("annotations:adjudicate", "unassigned"): (LOGIN, 404, 404, 404),  # not awaiting adjudication
    ("annotations:history", "assigned"): (LOGIN, 200, 200, 200),
    ("annotations:history", "unassigned"): (LOGIN, 404, 200, 200),
    ("annotations:dashboard", None): (LOGIN, 200, 200, 200),
}

# POST to the actions of a turn the reviewer is not assigned to.
POST_EXPECTED: dict[str, tuple] = {
    **{name: (LOGIN, 404, 200, 200) for name in ACTIONS},  # adjudicators get a banner (or a comment)
    "annotations:adjudicate": (LOGIN, 404, 200, 200),  # banner: the turn does not need adjudication
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
}
ADMIN_DEFAULT = (*NON_STAFF_ADMIN, 200)
# The imported record is read-only in the admin: even superusers may not add or delete its rows.
EHR_ADD_DELETE = re.compile(r"^admin:ehr_\w+_(add|delete)$")
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
def world(demo_cohort):
    reviewers = [make_user(f"rev{i}", "reviewer") for i in (1, 2)]
    adjudicator = make_user("adj", "adjudicator")
    admin = make_user("root", "admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    GenerationRunFactory()  # every admin model has a row to open
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
    return {
        "users": {"anonymous": None, "reviewer": reviewers[0], "adjudicator": adjudicator, "admin": admin},
        "samples": {
            "assigned": {"pk": disputed.pk},
            "unassigned": {"pk": unassigned.pk},
            "admission": {"hadm_id": Admission.objects.order_by("hadm_id").first().hadm_id},
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
