"""Bench: sessions/s of the rules backend over the demo cohort (plan → gold calls → gates).

    .venv/bin/python bench/generate_throughput.py [--n 10] [--seed 1]

Uses the configured database (``DATABASE_URL``, else the SQLite file under ``PHYSREVIEW_VAR_DIR``),
migrates it and imports the bundled demo cohort if it holds no patient. Generates ``--n`` sessions per
scenario × tier (12 cells), candidates enumerated once per cell as a generation run would, and prints
sessions/s, pass/reject counts and a SHA-256 of all drafts (equal digests across databases = same output).
The patient tools are answered by a record-derived stand-in (the discharge note's own section text),
so the figure measures generation, not the agentic patient.
"""

import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")

SECTIONS = {
    "patient.get_medication_adherence": "Medications on Admission",
    "patient.get_symptom_history": "History of Present Illness",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="sessions per scenario x tier")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import OperationalError

    from ehr import models as m
    from scenarios.generation import enumerate_candidates, generate_session
    from scenarios.generation.facts import load_admission_facts
    from scenarios.generation.types import SCENARIOS, TIERS

    try:
        call_command("migrate", verbosity=0)
    except OperationalError as exc:
        sys.exit(f"generate_throughput: cannot use the database ({exc}); create it or fix DATABASE_URL")
    if not m.Patient.objects.exists():
        call_command("import_mimic", str(BASE_DIR / "ehr" / "data" / "demo_cohort"), "--quiet")

    def patient(*, tool: str, arguments: dict) -> dict:
        note = m.DischargeNote.objects.filter(subject_id=arguments["subject_id"]).order_by("charttime").first()
        heading = SECTIONS.get(tool, "Social History")
        found = re.search(rf"^{re.escape(heading)}:\s*\n?(.*?)(?:\n\s*\n|\Z)", note.text if note else "", re.S | re.M)
        said = " ".join(found.group(1).split()) if found else "I am not sure."
        return {"answer_en": said, "answer_zh": said}

    status: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    digest = hashlib.sha256()
    start = time.perf_counter()
    facts = load_admission_facts()
    for scenario in SCENARIOS:
        for tier in TIERS:
            candidates = enumerate_candidates(scenario=scenario, tier=tier, facts=facts)
            for index in range(args.n):
                outcome = generate_session(
                    scenario=scenario,
                    tier=tier,
                    seed=args.seed,
                    index=index,
                    patient_answer=patient,
                    candidates=candidates,
                )
                status[outcome.status] += 1
                reasons.update(f.gate for f in outcome.reasons)
                if outcome.draft is not None:
                    digest.update(json.dumps(outcome.draft.to_dict(), sort_keys=True, ensure_ascii=False).encode())
    elapsed = time.perf_counter() - start
    total = sum(status.values())
    vendor = __import__("django.db", fromlist=["connection"]).connection.vendor
    print(f"database: {vendor}")
    print(f"sessions: {total} ({args.n} per scenario x tier, seed {args.seed}) in {elapsed:.2f} s")
    print(f"throughput: {total / elapsed:.1f} sessions/s ({4 * total / elapsed:.1f} turns/s)")
    print(f"status: {dict(sorted(status.items()))}; gate failures: {dict(sorted(reasons.items())) or 'none'}")
    print(f"digest: {digest.hexdigest()}")


if __name__ == "__main__":
    main()
