"""Show what changed between two snapshots: ``manage.py diff_snapshots v1 v2``."""

from django.core.management.base import BaseCommand, CommandError

from annotations.snapshots import selectors
from annotations.snapshots.diff import diff_snapshots
from annotations.snapshots.errors import SnapshotError


class Command(BaseCommand):
    help = "Added, removed and changed sessions and turns between two snapshots (changed: with field names)."

    def add_arguments(self, parser):
        parser.add_argument("old", help="vN, N or latest")
        parser.add_argument("new", help="vN, N or latest")

    def handle(self, *args, **opts):
        try:
            old = selectors.get_snapshot(ref=opts["old"])
            new = selectors.get_snapshot(ref=opts["new"])
        except SnapshotError as exc:
            raise CommandError(str(exc)) from None
        result = diff_snapshots(old=old, new=new)
        self.stdout.write(result.summary())
        for record_id in result.added:
            self.stdout.write(f"+ {record_id}")
        for record_id in result.removed:
            self.stdout.write(f"- {record_id}")
        for change in result.changed:
            self.stdout.write(
                f"~ {change.record_id}" + (f"  session: {', '.join(change.fields)}" if change.fields else "")
            )
            for turn in change.turns_changed:
                self.stdout.write(f"    turn {turn.index}: {', '.join(turn.fields)}")
            for index in change.turns_added:
                self.stdout.write(f"    turn {index}: added")
            for index in change.turns_removed:
                self.stdout.write(f"    turn {index}: removed")
