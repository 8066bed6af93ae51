"""Demo preparation: schema, bundled cohort, one user per role. Idempotent.

Passwords are random per checkout and kept in ``var/demo_credentials.json`` (never in the
code), so a demo left running on a shared machine does not have well-known credentials.
"""

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import transaction
from tqdm import tqdm

from scenarios.models import GenerationRun

DEMO_COHORT_DIR = Path(settings.BASE_DIR) / "ehr" / "data" / "demo_cohort"
ROLES = ("reviewer", "adjudicator", "admin")


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    role: str


def _credentials_file() -> Path:
    return Path(settings.VAR_DIR) / "demo_credentials.json"


def _load_or_create_passwords() -> dict[str, str]:
    path = _credentials_file()
    stored = json.loads(path.read_text()) if path.exists() else {}
    changed = False
    for role in ROLES:
        if role not in stored:
            stored[role] = secrets.token_urlsafe(9)
            changed = True
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=2))
        path.chmod(0o600)
    return stored


@transaction.atomic
def ensure_demo_users() -> list[DemoUser]:
    """One user per role; the stored password is (re)applied so the printed one always works."""
    passwords = _load_or_create_passwords()
    user_model = get_user_model()
    users = []
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        username = f"demo_{role}"
        user, _ = user_model.objects.get_or_create(username=username)
        user.is_staff = role == "admin"
        user.is_superuser = role == "admin"
        user.set_password(passwords[role])
        user.save()
        user.groups.add(group)
        users.append(DemoUser(username=username, password=passwords[role], role=role))
    return users


DEMO_SESSIONS = 48  # 4 per scenario × tier
DEMO_SEED = 20261130  # not 1: `generate --seed 1` stays free for users on a demo database


def ensure_demo_sessions(*, quiet: bool) -> GenerationRun:
    """The demo's generated sessions: made once by the rules backend, then only completed if a run was cut."""
    from scenarios import services

    run = GenerationRun.objects.filter(backend="rules", seed=DEMO_SEED, requested=DEMO_SESSIONS).first()
    if run is None:
        run = services.create_run(
            backend="rules",
            seed=DEMO_SEED,
            scenarios=list(services.ALL_SCENARIOS),
            tiers=list(services.ALL_TIERS),
            n=DEMO_SESSIONS,
        )
    for slot in tqdm(services.missing_slots(run=run), desc="demo sessions", disable=quiet):
        services.generate_slot(run_id=run.pk, index=slot.index)
    return services.refresh_run_counts(run_id=run.pk, finished=True)


def ensure_demo_assignments(*, run: GenerationRun) -> int:
    """Give demo_reviewer the demo sessions to review (idempotent: ``distribute`` skips assigned ones)."""
    from annotations.services import distribute

    reviewer = get_user_model().objects.get(username="demo_reviewer")
    return len(distribute(sessions=list(run.sessions.order_by("run_index")), reviewers=[reviewer], per_session=1))


def prepare_demo(*, quiet: bool = False) -> tuple[list[DemoUser], GenerationRun]:
    """Migrate, load the bundled cohort (the importer replaces tables, so re-runs are idempotent),
    generate the demo sessions, add users."""
    call_command("migrate", interactive=False, verbosity=0)
    args = [str(DEMO_COHORT_DIR)] + (["--quiet"] if quiet else [])
    call_command("import_mimic", *args)
    run = ensure_demo_sessions(quiet=quiet)
    users = ensure_demo_users()
    ensure_demo_assignments(run=run)
    return users, run
