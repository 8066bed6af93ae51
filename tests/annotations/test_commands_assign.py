"""`manage.py assign_reviewers`: balanced distribution, filters, clear errors that write nothing."""

import subprocess
import sys
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Assignment, TurnState
from scenarios.models import SessionStatus
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session


@pytest.fixture
def sessions(db):
    return [
        complete_session(scenario="med_safety", tier=1),
        complete_session(scenario="med_safety", tier=2),
        complete_session(scenario="discharge_planning", tier=1, record_id="discharge_planning_x"),
        complete_session(scenario="discharge_planning", tier=3, record_id="discharge_planning_y"),
    ]


def _load() -> Counter:
    return Counter(Assignment.objects.values_list("reviewer__username", flat=True))


def test_assigns_every_reviewer_group_member_balanced_and_prints_it(sessions, reviewers, capsys):
    make_user("adj", "adjudicator")  # not a reviewer: never picked
    call_command("assign_reviewers")
    out = capsys.readouterr().out
    assert Assignment.objects.count() == 8
    assert set(_load()) == {"rev1", "rev2", "rev3"} and sorted(_load().values()) == [2, 3, 3]  # balanced
    for s in sessions:
        assert s.assignments.count() == 2
        assert f"{s.record_id} → " in out
        assert set(s.turns.values_list("status", flat=True)) == {TurnState.IN_REVIEW}
    assert "8 assignment(s) created over 4 session(s)" in out
    # Idempotent: a second run creates nothing and says so.
    call_command("assign_reviewers")
    assert Assignment.objects.count() == 8
    assert "0 assignment(s) created" in capsys.readouterr().out


def test_named_reviewers_per_session_and_filters(sessions, reviewers, capsys):
    call_command("assign_reviewers", "--per-session", "1", "--reviewers", "rev3,rev1", "--scenario", "med_safety")
    assert _load() == {"rev3": 1, "rev1": 1}
    assert {a.session.scenario for a in Assignment.objects.all()} == {"med_safety"}
    call_command("assign_reviewers", "--per-session=2", "--reviewers=rev1,rev2", "--tier", "3")
    tier3 = sessions[3]
    assert set(tier3.assignments.values_list("reviewer__username", flat=True)) == {"rev1", "rev2"}
    assert sessions[2].assignments.count() == 0  # tier 1 discharge planning: filtered out


def test_sessions_rejected_by_the_gates_are_never_assigned(sessions, reviewers):
    sessions[0].status = SessionStatus.REJECTED_BY_GATE
    sessions[0].save()
    call_command("assign_reviewers")
    assert sessions[0].assignments.count() == 0 and Assignment.objects.count() == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reviewers", "rev1,ghost,nobody"], "unknown or inactive users: ghost, nobody"),
        (["--reviewers", "rev1,adj"], "not in the 'reviewer' group: adj"),
        (["--per-session", "4"], "--per-session 4 needs between 1 and 3 reviewers"),
        (["--per-session", "0"], "--per-session 0 needs between 1 and 3"),
        (["--reviewers", "rev1", "--per-session", "2"], "needs between 1 and 1"),
        (["--scenario", "surgery"], "unknown scenario surgery"),
        (["--tier", "7"], "unknown tier 7"),
        (["--tier", "one"], "--tier takes numbers 1-3"),
        (["--scenario", "treatment_response"], "no session matches"),
        (["--reviewers", " , "], "no reviewer usernames given"),
    ],
)
def test_bad_input_is_a_clear_error_and_writes_nothing(sessions, reviewers, args, message):
    make_user("adj", "adjudicator")
    with pytest.raises(CommandError) as excinfo:
        call_command("assign_reviewers", *args)
    assert message in str(excinfo.value)
    assert Assignment.objects.count() == 0


def test_no_reviewers_at_all_is_an_error(sessions):
    with pytest.raises(CommandError, match="no active user is in the 'reviewer' group"):
        call_command("assign_reviewers")


def test_exit_status_is_non_zero_from_the_command_line(settings):
    result = subprocess.run(
        [sys.executable, "manage.py", "assign_reviewers", "--per-session", "x"],
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
    )
    assert result.returncode != 0 and "--per-session" in result.stderr
