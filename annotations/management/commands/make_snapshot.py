"""Freeze the curated set into a new snapshot: ``manage.py make_snapshot [--scenario ...] [--tier ...]``."""

import sys

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotations.models import SnapshotStatus
from annotations.snapshots import card, recovery, selectors, services
from annotations.snapshots.duplicates import DuplicateSnapshot
from annotations.snapshots.errors import SnapshotError
from scenarios.models import Scenario


class Command(BaseCommand):
    help = "Make a new immutable snapshot of the sessions whose turns are all approved; prints its version."

    def add_arguments(self, parser):
        parser.add_argument("--scenario", action="append", choices=Scenario.values, help="repeatable; default all")
        parser.add_argument("--tier", action="append", type=int, choices=[1, 2, 3], help="repeatable; default all")
        parser.add_argument("--language", choices=["en", "zh", "both"], default="both")
        parser.add_argument("--user", help="username recorded as the snapshot's maker")
        parser.add_argument(
            "--ehr-provenance",
            choices=card.PROVENANCE,
            default=settings.EHR_PROVENANCE,
            help="what the EHR store the generated sessions came from holds (for the data-use note); "
            "default PHYSREVIEW_EHR_PROVENANCE (undeclared)",
        )
        parser.add_argument("--resume", metavar="vN", help="finish an interrupted or failed snapshot instead")
        parser.add_argument(
            "--force",
            action="store_true",
            help="make a new version even when its content equals the latest snapshot's (refused otherwise)",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, **opts):
        user = None
        if opts["user"]:
            user = get_user_model().objects.filter(username=opts["user"]).first()
            if user is None:
                raise CommandError(f"--user {opts['user']!r}: no such user")
        languages = ["en", "zh"] if opts["language"] == "both" else [opts["language"]]
        bars: dict[str, tqdm] = {}

        def progress(stage: str, done: int, total: int) -> None:
            # One bar per stage (freezing, writing, card), each closed when the next starts.
            if stage not in bars:
                for bar in bars.values():
                    bar.close()
                bars[stage] = tqdm(total=total, desc=stage, unit="session", file=sys.stderr, disable=opts["quiet"])
            bars[stage].update(done - bars[stage].n)

        # Builds whose process died (heartbeat stale) are resumed or failed first (annotations.snapshots.recovery).
        for line in recovery.recover_stale():
            self.stderr.write(f"stale {line}")
        try:
            try:
                if opts["resume"]:
                    snap = selectors.get_snapshot(ref=opts["resume"], ready_only=False)
                    if snap.status == SnapshotStatus.READY:
                        raise SnapshotError(f"snapshot {snap.label} is already ready")
                    snap = services.build_snapshot(snapshot_id=snap.pk, progress=progress)
                else:
                    snap = services.create_snapshot(
                        user=user,
                        scenarios=opts["scenario"],
                        tiers=opts["tier"],
                        languages=languages,
                        ehr_provenance=opts["ehr_provenance"],
                        progress=progress,
                        force=opts["force"],
                    )
            finally:
                for bar in bars.values():
                    bar.close()
        except DuplicateSnapshot as exc:
            raise CommandError(f"{exc} (--force makes one anyway)") from None
        except SnapshotError as exc:
            raise CommandError(str(exc)) from None
        counts, languages = snap.manifest["counts"], ", ".join(snap.filters["languages"])
        self.stdout.write(snap.label)
        self.stdout.write(
            f"{counts['sessions']} sessions, {counts['turns']} turns; languages {languages}; "
            f"content sha256 {snap.content_sha256}"
        )
        for f in snap.manifest["files"]:
            self.stdout.write(
                f"  {f['name']:<28} {f['format']:<8} {f['rows']:>7} rows {f['bytes']:>10} B  {f['sha256']}"
            )
