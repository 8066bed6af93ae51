"""Print the EHR tool schemas (OpenAI function-calling format) as JSON: the released tool contract."""

import json

from django.core.management.base import BaseCommand

from ehr.fhir import LANGUAGES, schema_hash, tool_schemas


class Command(BaseCommand):
    help = "Print the tool schemas as JSON (UTF-8), in English or Chinese."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--language", "--lang", dest="lang", choices=LANGUAGES, default="en", help="description language"
        )
        parser.add_argument("--api-names", action="store_true", help="API-safe names (Observation__search)")
        parser.add_argument("--hash", action="store_true", help="print only the schema hash (both languages)")

    def handle(self, *args, **options) -> None:
        if options["hash"]:
            self.stdout.write(schema_hash())
            return
        schemas = tool_schemas(language=options["lang"], api_safe_names=options["api_names"])
        self.stdout.write(json.dumps(schemas, ensure_ascii=False, indent=2))
