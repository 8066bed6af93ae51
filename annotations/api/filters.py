"""Query filters (django-filter) for sessions and turns; bad values answer 400 naming the parameter."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet
from django_filters import rest_framework as filters

from annotations.models import Assignment, TurnState
from annotations.roles import is_adjudicator
from scenarios.models import Scenario, SessionStatus, Source, TaskType

LANGUAGES = (("en", "English texts only"), ("zh", "Chinese texts only"), ("both", "both languages"))
TIERS = ((1, "L1"), (2, "L2"), (3, "L3"))
TURN_STATUSES = tuple((s, s) for s in TurnState.ALL)
SESSION_STATUSES = ((SessionStatus.DRAFT, SessionStatus.DRAFT), (SessionStatus.REJECTED_BY_GATE, "rejected by gate"))


def _by_reviewer(queryset: QuerySet, *, session_ref: str, username: str, requester) -> QuerySet:
    """Sessions assigned to ``username``. Reviewers may only ask about themselves (co-assignment of
    other reviewers is not theirs to see): any other name gives an empty result."""
    if not is_adjudicator(requester) and username != requester.get_username():
        return queryset.none()
    assigned = Assignment.objects.filter(session=OuterRef(session_ref), reviewer__username=username)
    return queryset.filter(Exists(assigned))


class SessionFilter(filters.FilterSet):
    scenario = filters.ChoiceFilter(choices=Scenario.choices)
    tier = filters.TypedChoiceFilter(choices=TIERS, coerce=int)
    status = filters.ChoiceFilter(choices=SESSION_STATUSES, help_text="generation status of the session")
    source = filters.ChoiceFilter(choices=Source.choices)
    reviewer = filters.CharFilter(method="filter_reviewer", help_text="username of an assigned reviewer")

    def filter_reviewer(self, queryset, name, value):
        return _by_reviewer(queryset, session_ref="pk", username=value, requester=self.request.user)


class TurnFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=TURN_STATUSES, help_text="review status of the turn")
    scenario = filters.ChoiceFilter(field_name="session__scenario", choices=Scenario.choices)
    tier = filters.TypedChoiceFilter(field_name="session__tier", choices=TIERS, coerce=int)
    task_type = filters.ChoiceFilter(choices=TaskType.choices)
    session = filters.NumberFilter(field_name="session_id", help_text="session id")
    reviewer = filters.CharFilter(method="filter_reviewer", help_text="username of a reviewer assigned to the session")
    # Not a row filter: every turn has both languages. It selects which texts the representation carries;
    # the other language's text fields are null. Declared here so that a bad value answers 400.
    language = filters.ChoiceFilter(
        choices=LANGUAGES,
        method="filter_language",
        help_text="texts to include: en, zh or both (default); the other language's text fields are null",
    )

    def filter_reviewer(self, queryset, name, value):
        return _by_reviewer(queryset, session_ref="session", username=value, requester=self.request.user)

    def filter_language(self, queryset, name, value):
        return queryset
