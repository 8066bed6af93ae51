from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from physreview.demo import credentials_file, prepare_demo


class Command(BaseCommand):
    help = (
        "Prepare the demo (migrate, load the bundled cohort, generate sessions, create users, assign and "
        "pre-review part of the set) and serve it on 127.0.0.1:8000."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-serve", action="store_true", help="Prepare only; do not start the server.")
        parser.add_argument("--addrport", default="127.0.0.1:8000", help="Where to serve (default 127.0.0.1:8000).")
        parser.add_argument("--quiet", action="store_true", help="No progress bars.")

    def handle(self, *args, no_serve: bool, addrport: str, quiet: bool, **options):
        try:
            demo = prepare_demo(quiet=quiet)
        except ValueError as exc:  # e.g. the demo's session ids already made by a hand-started run
            raise CommandError(f"demo sessions: {exc}") from None
        run, summary = demo.run, demo.summary
        self.stdout.write(self.style.SUCCESS("Demo ready."))
        self.stdout.write(
            f"{run.made} generated sessions (run {run.pk}, rules backend, seed {run.seed}); "
            f"{run.rejected_by_gate} rejected by the quality gates."
        )
        s, t = summary.sessions, summary.turns
        self.stdout.write(
            f"Review state (demo data, is_demo=True: {summary.demo_reviews} reviews, "
            f"{summary.demo_adjudications} adjudications):\n"
            f"  {s['reviewed']} sessions fully reviewed: {t.get('approved', 0)} turns approved, "
            f"{t.get('rejected', 0)} rejected\n"
            f"  {s['needs_adjudication']} sessions with turns in the adjudication queue: "
            f"{t.get('needs_adjudication', 0)} turns\n"
            f"  {s['pending']} sessions pending review: {t.get('in_review', 0) + t.get('draft', 0)} turns "
            "(demo_reviewer and demo_reviewer2 are assigned to every session)"
        )
        self.stdout.write(f"Open http://{addrport}/ and log in with one of:")
        for user in demo.users:
            self.stdout.write(f"  {user.role:<12} username: {user.username:<18} password: {user.password}")
        self.stdout.write(f"(credentials are kept in {credentials_file()})")
        if not no_serve:
            call_command("runserver", addrport, use_reloader=False)
