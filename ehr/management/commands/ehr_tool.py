"""Run one EHR tool as a model would, and print its result as JSON."""

import datetime as dt
import json

from django.core.management.base import BaseCommand, CommandError

from ehr.fhir import ToolContext, canonical_name, execute_tool
from ehr.fhir.context import BOUNDS


class Command(BaseCommand):
    help = "Run one EHR tool with JSON arguments at a session's current date and print the result as JSON."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="tool name, e.g. Observation.search")
        parser.add_argument("arguments", nargs="?", default="{}", help="tool arguments as a JSON object")
        parser.add_argument("--current-date", required=True, help="session current date, YYYY-MM-DD")
        parser.add_argument(
            "--subject-id", type=int, default=None, help="session patient (fills a missing 'subject_id')"
        )
        parser.add_argument("--hadm-id", type=int, default=None, help="session admission (default encounter of writes)")
        parser.add_argument("--session-id", default=None, help="session id (patient tools)")
        parser.add_argument(
            "--bounds", choices=BOUNDS, default="strict", help="cutoff bounds: strict (default) or release"
        )

    def handle(self, *args, **options) -> None:
        if canonical_name(options["name"]) is None:
            raise CommandError(f"unknown tool {options['name']!r} (see: manage.py ehr_tools_schema)")
        try:
            current = dt.date.fromisoformat(options["current_date"])
        except ValueError:
            raise CommandError(f"--current-date {options['current_date']!r} is not a date (YYYY-MM-DD)") from None
        try:
            arguments = json.loads(options["arguments"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"arguments are not valid JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise CommandError("arguments must be a JSON object, e.g. '{\"subject_id\": 10001234}'")
        context = ToolContext(
            current_date=current,
            subject_id=options["subject_id"],
            hadm_id=options["hadm_id"],
            session_id=options["session_id"],
            bounds=options["bounds"],
        )
        result = execute_tool(name=options["name"], arguments=arguments, context=context)
        self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))
        if "error" in result:
            # The JSON above is what a model would read; the exit code is for scripts.
            raise CommandError(f"{options['name']}: {result['error']}", returncode=2)
