"""Who may open what: one table of rules over every URL pattern and API route, enforced in one place.

Rules are looked up by the resolved view name (``namespace:name``); the first matching row of
:data:`RULES` wins and a URL that no row matches is refused (fail closed; ``tests/test_url_permissions``
walks the resolver so a new URL without a rule fails). :class:`AccessMiddleware` enforces the table for
pages; API views enforce it through :class:`RoleTablePermission` (DRF authenticates tokens inside the
view, after middleware), and the middleware refuses an API view that does not carry that permission.

Object scope stays with the views and selectors that own the objects: reviewers see only the sessions
assigned to them on the review screens and API, and only their sessions' turns in the results drill-down.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.permissions import BasePermission

from annotations.roles import has_role, is_adjudicator


class Rule(StrEnum):
    ANYONE = "anyone"  # signed in or not
    ROLE = "role"  # reviewer, adjudicator or admin (Django groups; superusers are admins)
    ADJUDICATOR = "adjudicator"  # adjudicator or admin
    STAFF = "staff"  # staff accounts (is_staff)
    ADMIN_SITE = "admin_site"  # the Django admin, which checks is_staff itself


@dataclass(frozen=True)
class Area:
    label: str
    rule: Rule
    views: tuple[str, ...]  # fnmatch patterns over resolved view names
    scope: str = ""  # object-level rule applied by the views (documentation)


RULES: tuple[Area, ...] = (
    Area("Log in, log out, interface language", Rule.ANYONE, ("home", "login", "logout", "set_language")),
    Area("API schema and docs", Rule.ANYONE, ("api:schema", "api:docs")),
    Area("Unknown API path (JSON 404)", Rule.ANYONE, ("api:annotations.api.views.NotFoundView",)),
    Area("EHR pages", Rule.ROLE, ("ehr:*",)),
    Area(
        "Review pages",
        Rule.ROLE,
        ("annotations:*",),
        "reviewers: turns of sessions assigned to them; adjudication screen: adjudicators and admins",
    ),
    Area("Review API", Rule.ROLE, ("api:api-root", "api:session-*", "api:turn-*"), "as the review pages"),
    Area("Curated snapshots API", Rule.ADJUDICATOR, ("api:snapshot-*",)),
    Area("Snapshot file downloads", Rule.STAFF, ("snapshots:*",)),
    Area(
        "Results drill-down (turns with gold answers and traces)",
        Rule.ROLE,
        ("evaluation:turns", "evaluation:turn", "evaluation:turn_fault", "api:run-turn-*"),
        "reviewers: turns of sessions assigned to them; a fault attribution is seen only by its author",
    ),
    Area(
        "Results pages and API (leaderboard, comparison, run summaries, downloads)",
        Rule.ROLE,
        (
            "evaluation:leaderboard",
            "evaluation:leaderboard_download",
            "evaluation:compare",
            "evaluation:run",
            "evaluation:run_download",
            "api:run-list",
            "api:run-detail",
        ),
    ),
    Area("Judge calibration: draw a sample", Rule.ADJUDICATOR, ("evaluation:calibration_draw",)),
    Area(
        "Judge calibration: grade (and save grades), agreement",
        Rule.ROLE,
        ("evaluation:calibration_*",),
        "reviewers see disagreements only on items they graded",
    ),
    Area("Django admin", Rule.ADMIN_SITE, ("admin:*",)),
)

NO_ROLE = "Your account has no role in PhysReview yet (reviewer, adjudicator or admin): ask an admin to add one."
REFUSED = {
    Rule.ROLE: NO_ROLE,
    Rule.ADJUDICATOR: "Only adjudicators and admins may open this.",
    Rule.STAFF: "Only staff accounts may open this.",
}


def rule_for(*, view_name: str) -> Area:
    """The first area whose patterns match ``view_name``; ``LookupError`` when none does."""
    for area in RULES:
        if any(fnmatchcase(view_name, pattern) for pattern in area.views):
            return area
    raise LookupError(f"no access rule for the view {view_name!r} (physreview.access.RULES)")


def allows(*, rule: Rule, user: Any) -> bool:
    if rule in (Rule.ANYONE, Rule.ADMIN_SITE):
        return True
    if not getattr(user, "is_authenticated", False):
        return False
    if rule is Rule.ROLE:
        return has_role(user)
    if rule is Rule.ADJUDICATOR:
        return is_adjudicator(user)
    return bool(user.is_staff)


def _is_api_view(view_func: Callable[..., Any]) -> bool:
    from rest_framework.views import APIView  # not at import: DRF's settings import this module

    cls = getattr(view_func, "cls", None)
    return isinstance(cls, type) and issubclass(cls, APIView)


class RoleTablePermission(BasePermission):
    """The table's rule for the route, checked after DRF authenticated the request (401 when anonymous)."""

    def has_permission(self, request, view) -> bool:
        try:
            area = rule_for(view_name=request.resolver_match.view_name)
        except LookupError as exc:
            self.message = str(exc)
            return False
        allowed = allows(rule=area.rule, user=request.user)
        if not allowed:
            self.message = REFUSED.get(area.rule, "Permission denied.")
        return allowed


class AccessMiddleware:
    """Enforces :data:`RULES` before every view: the login page for anonymous users, 403 for the rest."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        view_name = request.resolver_match.view_name
        if _is_api_view(view_func):
            if RoleTablePermission not in view_func.cls.permission_classes:
                message = f"the API view {view_name!r} does not enforce physreview.access (RoleTablePermission)"
                return JsonResponse({"error": {"code": "permission_denied", "message": message}}, status=403)
            return None  # DRF applies the same table once it has authenticated the request
        try:
            area = rule_for(view_name=view_name)
        except LookupError as exc:
            raise PermissionDenied(str(exc)) from None
        if allows(rule=area.rule, user=request.user):
            return None
        if not request.user.is_authenticated:
            if request.headers.get("HX-Request"):
                # A fragment request from a page whose session expired: the login page swapped into the panel
                # would replace what the user typed. 401 is not swapped by htmx; the page says so and keeps it.
                response = HttpResponse(status=401)
                response["X-Login-URL"] = redirect_to_login(_page_of(request)).url
                return response
            return redirect_to_login(request.get_full_path())
        raise PermissionDenied(REFUSED.get(area.rule, "Permission denied."))


def _page_of(request: HttpRequest) -> str:
    """The page an htmx request came from (``HX-Current-URL``), to return to after signing in: the fragment's own
    URL is often POST-only. Only a path on this site; else the start page."""
    current = urlsplit(request.headers.get("HX-Current-URL", ""))
    if current.netloc and current.netloc != request.get_host():
        return "/"
    return urlunsplit(("", "", current.path, current.query, "")) or "/"


def rules_markdown() -> str:
    """The table as Markdown (docs/operations.md), one row per area."""
    who = {
        Rule.ANYONE: "anyone",
        Rule.ROLE: "reviewer, adjudicator, admin",
        Rule.ADJUDICATOR: "adjudicator, admin",
        Rule.STAFF: "staff (demo_admin)",
        Rule.ADMIN_SITE: "staff (Django admin)",
    }
    lines = ["| area | URL names | who | object scope |", "|---|---|---|---|"]
    for area in RULES:
        names = ", ".join(f"`{v}`" for v in area.views)
        lines.append(f"| {area.label} | {names} | {who[area.rule]} | {area.scope or '—'} |")
    return "\n".join(lines)
