"""Demo preparation: schema, bundled cohort, users, sessions, assignments and part of the review. Idempotent.

Passwords are random per checkout and kept in ``var/demo_credentials.json`` (never in the
code), so a demo left running on a shared machine does not have well-known credentials.

The pre-review (:func:`ensure_demo_reviews`) goes through the review services like a physician would,
with ``is_demo=True`` on every review and adjudication it makes, following a fixed plan over the demo
sessions (by ``run_index``): the first 24 are fully reviewed (mostly agreeing approvals; some edits and
disagreements settled by ``demo_adjudicator``; a few rejections), the next 8 each leave a turn waiting in
the adjudication queue, and the last 16 are pending (``demo_reviewer2`` has reviewed half of them, so
``demo_reviewer`` has a full queue and sees blind review from the inside).
"""

import json
import secrets
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import transaction
from tqdm import tqdm

from scenarios.models import GenerationRun, Session, SessionStatus

DEMO_COHORT_DIR = Path(settings.BASE_DIR) / "ehr" / "data" / "demo_cohort"
ROLES = ("reviewer", "adjudicator", "admin")
# (username, role); the password key in the credentials file is the username without ``demo_``
# (``reviewer``, ``adjudicator``, ``admin`` as before, plus ``reviewer2``).
DEMO_USERS = (
    ("demo_reviewer", "reviewer"),
    ("demo_reviewer2", "reviewer"),
    ("demo_adjudicator", "adjudicator"),
    ("demo_admin", "admin"),
)
REVIEWERS = ("demo_reviewer", "demo_reviewer2")


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    role: str


def credentials_file() -> Path:
    return Path(settings.VAR_DIR) / "demo_credentials.json"


def _password_key(username: str) -> str:
    return username.removeprefix("demo_")


def _load_or_create_passwords() -> dict[str, str]:
    path = credentials_file()
    stored = json.loads(path.read_text()) if path.exists() else {}
    changed = False
    for username, _ in DEMO_USERS:
        if _password_key(username) not in stored:
            stored[_password_key(username)] = secrets.token_urlsafe(9)
            changed = True
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=2))
        path.chmod(0o600)
    return stored


@transaction.atomic
def ensure_demo_users() -> list[DemoUser]:
    """The demo users (two reviewers); the stored password is (re)applied so the printed one always works."""
    passwords = _load_or_create_passwords()
    user_model = get_user_model()
    users = []
    for username, role in DEMO_USERS:
        group, _ = Group.objects.get_or_create(name=role)
        password = passwords[_password_key(username)]
        user, _ = user_model.objects.get_or_create(username=username)
        user.is_staff = role == "admin"
        user.is_superuser = role == "admin"
        if not user.check_password(password):  # hashing is slow and would change the row each run
            user.set_password(password)
        user.save()
        user.groups.add(group)
        users.append(DemoUser(username=username, password=password, role=role))
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


def demo_sessions(*, run: GenerationRun) -> list[Session]:
    return list(run.sessions.exclude(status=SessionStatus.REJECTED_BY_GATE).order_by("run_index"))


def ensure_demo_assignments(*, run: GenerationRun) -> int:
    """Both demo reviewers on every demo session, through the balanced ``distribute`` (idempotent: it tops
    sessions up to two reviewers and creates nothing once they have them). Returns how many it created."""
    from annotations.services import distribute

    users = get_user_model().objects.in_bulk(REVIEWERS, field_name="username")
    reviewers = [users[name] for name in REVIEWERS]
    admin = get_user_model().objects.get(username="demo_admin")
    return len(distribute(sessions=demo_sessions(run=run), reviewers=reviewers, per_session=2, by=admin))


# --- pre-review plan -------------------------------------------------------------------------------
FULLY_REVIEWED = range(0, 24)  # demo session positions (by run_index)
AWAITING_ADJUDICATION = range(24, 32)
HALF_REVIEWED = range(32, 40)  # demo_reviewer2 has reviewed turns 0 and 1; demo_reviewer nothing yet

REJECT_REASONS = {
    "false_premise": "The request assumes a value the record does not show as of the current date, and the "
    "gold answer goes along with it instead of correcting it.",
    "unsafe": "Acting on the gold answer as written could lead to an unsafe medication decision.",
    "not_grounded": "The gold answer states a finding the record before the current date does not contain.",
    "wrong_tool_arguments": "The gold call searches without hadm_id, so it mixes in earlier admissions.",
    "translation_error": "The Chinese request loses the time window stated in the English one.",
    "unnatural_wording": "The implicit request reads like a template; no clinician would phrase it this way.",
}


@dataclass(frozen=True)
class Step:
    """One planned action on turn ``index`` of a session: a review by ``who``, or (``who="adjudicate"``)
    an adjudication taking ``take``'s review, or ``"merged"`` for both reviews' changes together."""

    index: int
    who: str
    decision: str = "approve"
    edit: str = ""  # reviews: a key of EDITS
    reject_reason: str = ""
    take: str = ""  # adjudications: a reviewer username or "merged"
    note: str = ""  # adjudications: the adjudicator's reason


def _date_note(turn: Any) -> dict[str, Any]:
    """Reviewer edit: state the cutoff the answer is valid at, in both languages (nothing of the current
    date itself is charted yet: the cutoff rule of ``ehr.fhir.context``)."""
    day = turn.session.current_date.isoformat()
    return {
        "answer_en": f"{turn.answer_en.rstrip()} (As recorded before {day}.)",
        "answer_zh": f"{turn.answer_zh.rstrip()}（以上为 {day} 之前的记录。）",
    }


def _rubric_item(turn: Any) -> dict[str, Any]:
    """Reviewer edit: add a grounding item to the rubric."""
    from annotations import content as tc

    rubric = tc.snapshot(turn=turn)["rubric"]
    extra = {
        "id": None,
        "text_en": "Uses only data recorded before the session's current date",
        "text_zh": "仅使用当前日期之前记录的数据",
        "is_safety": False,
        "machine_check": None,
    }
    return {"rubric": [*rubric, extra]}


def _rubric_reword(turn: Any) -> dict[str, Any]:
    """Reviewer edit: tie the last rubric item to the session's cutoff (keeps the item count the gates expect)."""
    from annotations import content as tc

    rubric = tc.snapshot(turn=turn)["rubric"]
    if not rubric:
        return _rubric_item(turn)
    last = rubric[-1]
    last["text_en"] = f"{last['text_en'].rstrip('.')}, as recorded before the current date"
    last["text_zh"] = f"{last['text_zh'].rstrip('。')}（以当前日期之前的记录为准）"
    return {"rubric": rubric}


def _safety_mark(turn: Any) -> dict[str, Any]:
    """Reviewer edit: mark the first rubric item as a safety item (or unmark it)."""
    from annotations import content as tc

    rubric = tc.snapshot(turn=turn)["rubric"]
    if not rubric:
        return _rubric_item(turn)
    rubric[0]["is_safety"] = not rubric[0]["is_safety"]
    return {"rubric": rubric}


EDITS = {
    "date_note": _date_note,
    "rubric_item": _rubric_item,
    "rubric_reword": _rubric_reword,
    "safety_mark": _safety_mark,
}
R1, R2 = REVIEWERS


def _both(index: int, d1: str = "approve", d2: str = "approve", *, e1: str = "", e2: str = "", why: str = ""):
    return [
        Step(index, R1, d1, e1, why if d1 == "reject" else ""),
        Step(index, R2, d2, e2, why if d2 == "reject" else ""),
    ]


def _adjudication(index: int, take: str, note: str, decision: str = "approve", why: str = "") -> Step:
    return Step(index, "adjudicate", decision, reject_reason=why, take=take, note=note)


def review_plan(position: int, n_turns: int) -> list[Step]:
    """The planned actions on the demo session at ``position``, in order (deterministic)."""
    reasons = list(REJECT_REASONS)
    special: dict[int, list[Step]] = {}
    if position in FULLY_REVIEWED:
        if position % 4 == 1:  # one reviewer edits, the other approves: the adjudicator takes the edit
            special[1] = [*_both(1, e1="rubric_reword"), _adjudication(1, R1, "The reworded item is clearer.")]
        if position % 4 == 3:  # both edit differently: the adjudicator merges the two proposals
            note = "Both edits improve the turn; merged."
            special[2] = [*_both(2, e1="date_note", e2="safety_mark"), _adjudication(2, "merged", note)]
        if position in (2, 14):  # disagreement: the adjudicator upholds the rejection
            why = "false_premise" if position == 2 else "wrong_tool_arguments"
            note = "Agree with the rejection after checking the record."
            special[3] = [*_both(3, "approve", "reject", why=why), _adjudication(3, R2, note, "reject", why)]
        if position in (10, 22):  # disagreement: the adjudicator overrules the rejection
            note = "The record before the current date supports the answer; the rejection is overruled."
            special[3] = [*_both(3, "approve", "reject", why="not_grounded"), _adjudication(3, R1, note)]
        if position in (6, 18):  # both reject for the same reason: rejected without adjudication
            why = "translation_error" if position == 6 else "unnatural_wording"
            special[0] = _both(0, "reject", "reject", why=why)
    elif position in AWAITING_ADJUDICATION:
        index = position % n_turns
        if position % 2 == 0:
            why = reasons[(position // 2) % len(reasons)]
            special[index] = _both(index, "approve", "reject", why=why)
        else:  # an edit; the added rubric item also shows a quality-gate warning (item count)
            special[index] = _both(index, e2="date_note" if position % 4 == 1 else "rubric_item")
    elif position in HALF_REVIEWED:
        return [Step(index, R2) for index in range(min(2, n_turns))]
    else:
        return []
    return [step for index in range(n_turns) for step in special.get(index, _both(index))]


def _review(turn: Any, step: Step, users: dict[str, Any]) -> bool:
    from annotations.models import Review, TurnState
    from annotations.services import submit_review

    reviewer = users[step.who]
    # Never touch a turn someone (demo or person) already reviewed or that is no longer in review.
    if (
        turn.status not in (TurnState.DRAFT, TurnState.IN_REVIEW)
        or Review.objects.filter(turn=turn, reviewer=reviewer).exists()
    ):
        return False
    submit_review(
        turn=turn,
        reviewer=reviewer,
        decision=step.decision,
        reject_reason=step.reject_reason,
        reason=REJECT_REASONS.get(step.reject_reason, ""),
        proposed=EDITS[step.edit](turn) if step.edit else None,
        base_version=turn.version,
        is_demo=True,
    )
    return True


def _adjudicate(turn: Any, step: Step, users: dict[str, Any]) -> bool:
    from annotations import content as tc
    from annotations.models import Chosen, TurnState
    from annotations.services import adjudicate
    from annotations.services.adjudication import reviews_ab

    if turn.status != TurnState.NEEDS_ADJUDICATION:
        return False
    review_a, review_b = reviews_ab(turn=turn)
    content = None
    if step.take == "merged":  # both proposals' changes, B's laid over A's
        chosen, content = Chosen.MERGED, {}
        for review in (review_a, review_b):
            content.update(tc.changes_between(base=review.base_content, proposed=review.proposed))
    else:
        chosen = Chosen.REVIEW_A if review_a.reviewer.get_username() == step.take else Chosen.REVIEW_B
    adjudicate(
        turn=turn,
        adjudicator=users["demo_adjudicator"],
        chosen=chosen,
        content=content,
        base_version=turn.version,
        decision=step.decision,
        reject_reason=step.reject_reason,
        reason=step.note,
        is_demo=True,
    )
    return True


def ensure_demo_reviews(*, run: GenerationRun, quiet: bool) -> int:
    """Carry out the pre-review plan; steps already done (or overtaken by people using the demo) are
    skipped, so a second run does nothing. Returns the number of reviews and adjudications made."""
    users = get_user_model().objects.in_bulk([*REVIEWERS, "demo_adjudicator"], field_name="username")
    done = 0
    sessions = demo_sessions(run=run)
    for position, session in enumerate(tqdm(sessions, desc="demo reviews", disable=quiet)):
        turns = {t.index: t for t in session.turns.order_by("index")}
        for step in review_plan(position, len(turns)):
            turn = turns[step.index]
            turn.refresh_from_db()
            with transaction.atomic():
                done += (_adjudicate if step.who == "adjudicate" else _review)(turn, step, users)
    return done


@dataclass(frozen=True)
class DemoSummary:
    """Review state of the demo sessions: sessions by their least advanced turn, and turns by status."""

    sessions: dict[str, int]  # reviewed / needs_adjudication / pending
    turns: dict[str, int]  # turn status → count
    demo_reviews: int
    demo_adjudications: int


def demo_summary(*, run: GenerationRun) -> DemoSummary:
    from annotations.models import Adjudication, Review, TurnState
    from scenarios.models import Turn

    turns = Turn.objects.filter(session__run=run).exclude(session__status=SessionStatus.REJECTED_BY_GATE)
    by_session: dict[int, set[str]] = {}
    for session_id, status in turns.values_list("session_id", "status"):
        by_session.setdefault(session_id, set()).add(status)
    final = {TurnState.APPROVED, TurnState.REJECTED}
    sessions = Counter(
        "reviewed"
        if statuses <= final
        else "needs_adjudication"
        if TurnState.NEEDS_ADJUDICATION in statuses
        else "pending"
        for statuses in by_session.values()
    )
    return DemoSummary(
        sessions={k: sessions[k] for k in ("reviewed", "needs_adjudication", "pending")},
        turns=dict(Counter(turns.values_list("status", flat=True))),
        demo_reviews=Review.objects.filter(turn__session__run=run, is_demo=True, submitted_at__isnull=False).count(),
        demo_adjudications=Adjudication.objects.filter(turn__session__run=run, is_demo=True).count(),
    )


@dataclass(frozen=True)
class Demo:
    users: list[DemoUser]
    run: GenerationRun
    summary: DemoSummary
    guidelines: dict[str, str]


def prepare_demo(*, quiet: bool = False) -> Demo:
    """Migrate, load the bundled cohort (the importer replaces tables, so re-runs are idempotent),
    generate the demo sessions, add users and guidelines, assign both reviewers and pre-review."""
    from annotations.guidelines import load_guidelines

    call_command("migrate", interactive=False, verbosity=0)
    args = [str(DEMO_COHORT_DIR)] + (["--quiet"] if quiet else [])
    call_command("import_mimic", *args)
    run = ensure_demo_sessions(quiet=quiet)
    users = ensure_demo_users()
    guidelines = load_guidelines()
    ensure_demo_assignments(run=run)
    ensure_demo_reviews(run=run, quiet=quiet)
    return Demo(users=users, run=run, summary=demo_summary(run=run), guidelines=guidelines)
