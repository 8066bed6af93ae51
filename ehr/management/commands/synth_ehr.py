"""Write a synthetic MIMIC-IV-layout cohort: ``manage.py synth_ehr --patients N --seed S --out DIR``."""

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.paths import probe_writable_dir
from ehr.synth.cohort import generate_cohort

MAX_PATIENTS = 100_000


class Command(BaseCommand):
    help = "Generate a deterministic synthetic cohort in the MIMIC-IV layout (hosp/, icu/, note/ *.csv.gz)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--patients", type=int, required=True, help="number of patients (>= 1)")
        parser.add_argument("--seed", type=int, default=0, help="random seed; same seed, same bytes")
        parser.add_argument("--out", required=True, help="output directory (created if missing)")
        parser.add_argument("--quiet", action="store_true", help="no progress bar or summary")

    def handle(self, *args: object, **options: object) -> None:
        patients = options["patients"]
        seed = options["seed"]
        out = Path(str(options["out"]))
        quiet = bool(options["quiet"])
        if not isinstance(patients, int) or not 1 <= patients <= MAX_PATIENTS:
            raise CommandError(f"--patients must be between 1 and {MAX_PATIENTS}, got {patients}")
        if not isinstance(seed, int) or seed < 0:
            raise CommandError(f"--seed must be a non-negative integer, got {seed}")
        _check_out_dir(out)
        started = time.perf_counter()
        with tqdm(total=patients, desc="synth_ehr", unit="patient", disable=quiet) as bar:
            counts = generate_cohort(patients=patients, seed=seed, out_dir=out, on_patient=lambda: bar.update(1))
        if not quiet:
            total = sum(counts.values())
            self.stdout.write(
                f"Wrote {total} rows in {len(counts)} tables to {out} in {time.perf_counter() - started:.1f}s"
            )
            for name, count in counts.items():
                self.stdout.write(f"  {name:<20} {count:>8}")


def _check_out_dir(out: Path) -> None:
    """Fail before generating anything if ``out`` cannot hold the cohort (a clear message, no traceback)."""
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {out} exists and is not a directory")
    blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise CommandError(f"--out {out}: {blocker} is a file, not a directory")
    try:
        probe_writable_dir(out)
    except OSError as exc:
        raise CommandError(f"--out {out} is not writable: {exc.strerror or exc}") from None
