from collections import Counter

from django.core.management.base import BaseCommand, CommandError

from annotations.models import Assignment
from annotations.services.assignment import distribute, reviewable_sessions, reviewer_pool


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(BaseCommand):
    help = (
        "Give every session N reviewers, balanced over the reviewers (least-loaded first). Sessions that "
        "already have N reviewers are left alone, so running it again creates nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--per-session", type=int, default=2, help="Reviewers per session (default 2).")
        parser.add_argument(
            "--reviewers", help="Comma-separated usernames (default: every active user in the 'reviewer' group)."
        )
        parser.add_argument("--scenario", action="append", default=[], help="Only this scenario (repeatable, or a,b).")
        parser.add_argument("--tier", action="append", default=[], help="Only this tier 1-3 (repeatable, or 1,2).")

    def handle(self, *args, per_session: int, reviewers: str | None, scenario: list[str], tier: list[str], **options):
        scenarios = [s for value in scenario for s in _csv(value)]
        try:
            tiers = [int(t) for value in tier for t in _csv(value)]
        except ValueError:
            raise CommandError(f"--tier takes numbers 1-3, got {', '.join(tier)}") from None
        try:
            pool = reviewer_pool(usernames=_csv(reviewers) if reviewers is not None else None)
            if per_session < 1 or per_session > len(pool):
                raise ValueError(
                    f"--per-session {per_session} needs between 1 and {len(pool)} reviewers "
                    f"(have: {', '.join(u.get_username() for u in pool)})"
                )
            sessions = list(reviewable_sessions(scenarios=scenarios, tiers=tiers))
            if not sessions:
                raise ValueError("no session matches (sessions rejected by the quality gates are never assigned)")
            created = distribute(sessions=sessions, reviewers=pool, per_session=per_session)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for assignment in created:
            self.stdout.write(f"  {assignment.session.record_id} → {assignment.reviewer.get_username()}")
        load = Counter(
            Assignment.objects.filter(reviewer__in=pool).values_list("reviewer__username", flat=True).order_by()
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(created)} assignment(s) created over {len({a.session_id for a in created})} session(s); "
                f"{len(sessions)} session(s) matched, {per_session} reviewer(s) each."
            )
        )
        self.stdout.write(
            "Sessions per reviewer: " + ", ".join(f"{u.get_username()} {load[u.get_username()]}" for u in pool)
        )
