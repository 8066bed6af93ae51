from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotations.models import Assignment
from annotations.selectors import review_queue
from ehr.mimic_tables import TABLES
from scenarios.models import Session


def _counts() -> dict[str, int]:
    return {name: spec.model.objects.count() for name, spec in TABLES.items()}


def test_demo_no_serve_is_idempotent_and_prints_logins(demo_cohort, settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    call_command("demo", "--no-serve", "--quiet")
    first_counts = _counts()
    first_out = capsys.readouterr().out
    call_command("demo", "--no-serve", "--quiet")
    second_out = capsys.readouterr().out

    assert _counts() == first_counts
    # Every scenario × tier has generated sessions, made once (the second run only checks).
    sessions = Session.objects.all()
    assert sessions.count() >= 48
    assert {(s.scenario, s.tier) for s in sessions} == {
        (sc, t)
        for sc in ("diagnostic_workup", "med_safety", "treatment_response", "discharge_planning")
        for t in (1, 2, 3)
    }
    assert first_counts["patients"] > 0 and first_counts["labevents"] > 0
    # Same printed credentials both times, and they work.
    assert first_out == second_out
    user_model = get_user_model()
    for role in ("reviewer", "adjudicator", "admin"):
        line = next(line for line in first_out.splitlines() if f"username: demo_{role}" in line)
        password = line.rsplit("password: ", 1)[1].strip()
        assert user_model.objects.get(username=f"demo_{role}").check_password(password)
        assert user_model.objects.get(username=f"demo_{role}").groups.filter(name=role).exists()
    assert user_model.objects.get(username="demo_admin").is_superuser
    assert not user_model.objects.get(username="demo_reviewer").is_staff
    # The demo reviewer has sessions to review, assigned once (the second run adds nothing).
    reviewer = user_model.objects.get(username="demo_reviewer")
    assert review_queue(user=reviewer).exists()
    assert Assignment.objects.filter(reviewer=reviewer).count() >= 48
