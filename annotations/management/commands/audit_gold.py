"""``audit_gold [--snapshot vN | --sessions ID ...] [--bounds strict|release] [--json] [--quiet]``.

Re-executes every gold EHR call against the loaded record, traces the numbers of the gold answers and
rubric items, checks the requests' premises (:mod:`scenarios.audit`), stores the findings per turn
for the review screen and prints a table per session and the totals (or one JSON document).
It reports, it does not fail: exit status 0 whatever it finds; bad arguments exit non-zero.

The command lives in ``annotations`` because ``--snapshot`` is a review concept (snapshots are
this app's); the audit itself is a ``scenarios`` service that knows nothing of snapshots.
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q
from tqdm import tqdm

from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.selectors import get_snapshot, items_in_order
from ehr.fhir.context import BOUNDS
from scenarios.audit import audit_sessions, session_table
from scenarios.models import Session


def snapshot_sessions(*, ref: str) -> tuple[list[Session], list[str]]:
    """The live sessions frozen in snapshot ``ref`` (matched by record id), and the record ids of the
    snapshot that are no longer in the database. Raises SnapshotError for an unknown snapshot."""
    snapshot = get_snapshot(ref=ref)
    record_ids = list(items_in_order(snapshot=snapshot).values_list("record_id", flat=True))
    found = {s.record_id: s for s in Session.objects.filter(record_id__in=record_ids)}
    return [found[r] for r in record_ids if r in found], [r for r in record_ids if r not in found]


def named_sessions(*, ids: list[str]) -> list[Session]:
    """Sessions by record id or session id; CommandError naming every id that matches none."""
    found = list(Session.objects.filter(Q(record_id__in=ids) | Q(session_id__in=ids)))
    known = {s.record_id for s in found} | {s.session_id for s in found}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise CommandError(f"unknown session(s): {', '.join(unknown)} (give a record id or a session id)")
    return found


class Command(BaseCommand):
    help = (
        "Audit the gold: re-execute every gold EHR call and compare it with its stored observation on facts, "
        "trace every number of the gold answers and rubric items, and check the requests' premises against the "
        "record. Findings are stored per turn and shown on the review screen. Exit status 0 whatever is found."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--snapshot", metavar="vN", help="the sessions of a ready snapshot (vN, N or latest)")
        which.add_argument("--sessions", nargs="+", metavar="ID", help="record ids or session ids")
        parser.add_argument("--bounds", choices=BOUNDS, default="strict", help="tool bounds mode (default strict)")
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: object, **opts: object) -> None:
        if opts["snapshot"]:
            try:
                sessions, missing = snapshot_sessions(ref=str(opts["snapshot"]))
            except SnapshotError as exc:
                raise CommandError(str(exc)) from None
            if missing:
                self.stderr.write(
                    f"{len(missing)} session(s) of snapshot {opts['snapshot']} are no longer in the database "
                    f"and are not audited: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}"
                )
            if not sessions:
                raise CommandError(f"snapshot {opts['snapshot']}: none of its sessions is in the database")
        elif opts["sessions"]:
            sessions = named_sessions(ids=[str(i) for i in opts["sessions"]])  # type: ignore[union-attr]
        else:
            sessions = list(Session.objects.only("pk"))
        bar = tqdm(
            total=len(sessions), desc="audit", unit="session", file=sys.stderr, disable=bool(opts["quiet"]) or None
        )
        try:
            with bar:
                report = audit_sessions(
                    sessions=sessions, bounds=str(opts["bounds"]), progress=lambda done, _total: bar.update(1)
                )
        except KeyboardInterrupt:
            raise CommandError("interrupted: the sessions audited so far are stored; run again to finish") from None
        if opts["json"]:
            self.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=1, default=str))
            return
        for result in report.sessions:
            self.stdout.write("\n".join(session_table(result)))
        self.stdout.write(report.totals_line())
