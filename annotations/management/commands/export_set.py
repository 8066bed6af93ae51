"""Write a snapshot's files to a folder: ``manage.py export_set --snapshot latest|vN --format ... --out DIR``."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotations.snapshots import selectors, services
from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.exporters import FORMATS, parse_formats


class Command(BaseCommand):
    help = "Export a snapshot (PAB JSONL per scenario, flat turns.jsonl, turns.parquet) into a new folder."

    def add_arguments(self, parser):
        parser.add_argument("--snapshot", default="latest", help="latest (default), vN or N")
        parser.add_argument(
            "--format", action="append", dest="formats", help=f"{', '.join(FORMATS)} or all (repeatable; default all)"
        )
        parser.add_argument("--out", required=True, help="folder to create (must not exist, or be empty)")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, **opts):
        try:
            formats = parse_formats(opts["formats"] or ["all"])
            snap = selectors.get_snapshot(ref=opts["snapshot"])
            total = snap.items.count()
            with tqdm(total=total, unit="session", desc=snap.label, file=sys.stderr, disable=opts["quiet"]) as bar:
                files = services.export_to(
                    snapshot=snap,
                    formats=formats,
                    out=Path(opts["out"]),
                    on_item=lambda: bar.update(1),
                )
        except SnapshotError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"--out {opts['out']}: cannot write there ({exc.strerror or exc})") from None
        self.stdout.write(f"{snap.label} → {opts['out']}")
        for f in files:
            self.stdout.write(f"  {f['sha256']}  {f['name']}  ({f['rows']} rows, {f['bytes']} B)")
