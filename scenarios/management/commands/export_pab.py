"""``export_pab --out FILE [--scenario NAME ...] [--tier N ...] [--status S ...] [--quiet]``."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from scenarios.models import Scenario
from scenarios.pab import PabArgumentError, export_pab


class Command(BaseCommand):
    help = (
        "Export sessions as PhysAssistBench JSONL (UTF-8, one session per line, deterministic order). "
        "The file is written to a temporary name and renamed when complete."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", required=True, metavar="FILE", help="output .jsonl file (replaced)")
        parser.add_argument("--scenario", nargs="+", metavar="NAME", help=f"only these ({', '.join(Scenario.values)})")
        parser.add_argument("--tier", nargs="+", type=int, metavar="N", help="only these tiers (1, 2, 3)")
        parser.add_argument("--status", nargs="+", metavar="S", help="only sessions in these statuses")
        parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
        parser.add_argument(
            "--no-extension",
            action="store_true",
            help="leave out PhysReview's 'physreview' field (an unedited imported record is then written as read)",
        )

    def handle(self, *args: object, **options: object) -> None:
        try:
            result = export_pab(
                out=Path(str(options["out"])),
                scenarios=options["scenario"],  # type: ignore[arg-type]
                tiers=options["tier"],  # type: ignore[arg-type]
                statuses=options["status"],  # type: ignore[arg-type]
                progress=not options["quiet"],
                extension=not options["no_extension"],
            )
        except PabArgumentError as exc:
            raise CommandError(str(exc)) from None
        except KeyboardInterrupt:
            raise CommandError(f"interrupted: {options['out']} left unchanged") from None
        except DatabaseError as exc:
            raise CommandError(f"database error, {options['out']} left unchanged: {exc}") from None
        except OSError as exc:
            raise CommandError(f"cannot write {options['out']}: {exc}") from None
        if not options["quiet"]:
            self.stdout.write(f"{result.sessions} session(s) written to {result.path}")
