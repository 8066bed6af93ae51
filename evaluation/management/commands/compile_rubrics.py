"""``compile_rubrics (--all | --session ID... | --snapshot REF | --file JSONL) [--force] [--dry-run] [--quiet]``.

Runs the rubric compiler (scenarios.rubric_compiler) and prints its coverage: items compiled per task type
and language, by rule, why the others were not, and how the gold answer fares on the compiled checks.
Stored sessions get the suggestions (reviewer decisions and machine checks are never touched); a
snapshot is frozen and a file is not imported, so those two only report.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.judges.gold import GoldPass
from scenarios.models import RubricItem, Session
from scenarios.pab import PabRecordError
from scenarios.rubric_compiler import COMPILER_VERSION
from scenarios.rubric_compiler.report import Coverage
from scenarios.rubric_compiler.services import compile_records, compile_stored


class Command(BaseCommand):
    help = "Derive machine-checkable forms of natural-language rubric items and print the coverage."

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group()
        chosen.add_argument("--all", action="store_true", help="every stored session")
        chosen.add_argument("--session", nargs="+", metavar="ID", help="stored sessions by record id")
        chosen.add_argument("--snapshot", metavar="REF", help="a curated snapshot (latest, vN): report only")
        chosen.add_argument(
            "--file", metavar="JSONL", help="a PhysAssistBench JSONL file: report only, nothing imported"
        )
        parser.add_argument("--force", action="store_true", help="recompile items this compiler version already did")
        parser.add_argument("--dry-run", action="store_true", help="report only, store nothing")
        parser.add_argument("--failures", action="store_true", help="list the compiled checks the gold answer fails")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: object, **options: object) -> None:
        if not any(options[k] for k in ("all", "session", "snapshot", "file")):
            raise CommandError("choose what to compile: --all, --session ID..., --snapshot REF or --file JSONL")
        progress = not options["quiet"]
        gold = GoldPass()
        try:
            coverage = self._run(options, progress=progress, gold=gold)
        except KeyboardInterrupt:
            raise CommandError("interrupted: chunks already written are kept; run again to resume") from None
        self.stdout.write(f"compiler {COMPILER_VERSION}")
        for line in coverage.lines():
            self.stdout.write(line)
        self.stdout.write(gold.line())
        if options["failures"]:
            for failure in gold.failures:
                self.stdout.write(f"  {failure}")

    def _run(self, options: dict, *, progress: bool, gold: GoldPass) -> Coverage:
        if options["file"]:
            path = Path(str(options["file"]))
            try:
                return compile_records(records=_read(path), progress=progress, hook=gold)
            except PabRecordError as exc:
                raise CommandError(f"{path}: {exc}") from None
        if options["snapshot"]:
            from annotations.snapshots.selectors import iter_items
            from evaluation.dataset import resolve_snapshot

            try:
                snapshot = resolve_snapshot(str(options["snapshot"]))
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            records = [json.loads(item.record_json) for item in iter_items(snapshot=snapshot)]
            return compile_records(records=records, progress=progress, hook=gold)
        items = RubricItem.objects.all()
        if options["session"]:
            ids = list(dict.fromkeys(options["session"]))
            known = set(Session.objects.filter(record_id__in=ids).values_list("record_id", flat=True))
            if missing := [i for i in ids if i not in known]:
                raise CommandError(f"no stored session with record id {', '.join(missing)}")
            items = items.filter(turn__session__record_id__in=ids)
        return compile_stored(
            items=items,
            force=bool(options["force"]),
            dry_run=bool(options["dry_run"]),
            progress=progress,
            hook=gold,
        )


def _read(path: Path) -> list[dict]:
    if not path.is_file():
        raise CommandError(f"{path}: no such file")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    return records
