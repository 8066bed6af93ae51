"""Calibration grades for the demo, then ``certify_judges`` on them: the figures in docs/model-developers.md.

The demo (``manage.py demo --no-serve``) has sessions and reviews but no evaluation run and no physician
grade. This script, run against the demo's database (same PHYSREVIEW_VAR_DIR / DATABASE_URL as the demo):

1. plays ``rules:heuristic`` and ``rules:no-tools`` on every demo session in both languages (rules judge),
   unless runs of them exist, and compiles the rubrics (so ``rules (compiled)`` has verdicts);
2. draws the calibration sample ``demo-calibration`` (8 items per task type × language × verdict, seed 7);
3. grades it as two SIMULATED physicians (demo_reviewer, demo_reviewer2): the rules judge's verdict where it
   scored the item, else the compiled check's verdict, else "can't tell"; then each reviewer flips a seeded
   share of their grades (8% and 12%). The figures therefore measure this simulation, not a judge's real
   quality: they show the machinery end to end, nothing more;
4. runs ``certify_judges --runs <the runs>``.

    PHYSREVIEW_VAR_DIR=/tmp/var-demo python bench/demo_calibration.py
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from evaluation.calibration import compiled, services  # noqa: E402
from evaluation.models import EvalRun, EvalStatus  # noqa: E402

AGENTS = ("rules:heuristic", "rules:no-tools")
SAMPLE, PER_STRATUM, SEED = "demo-calibration", 8, 7
GRADERS = {"demo_reviewer": 0.08, "demo_reviewer2": 0.12}


def ensure_runs() -> list[int]:
    ids = []
    for agent in AGENTS:
        run = EvalRun.objects.filter(model=agent, judge="rules", status=EvalStatus.FINISHED, rejudge_of=None).first()
        if run is None:
            call_command("runeval", "--model", agent, "--from-db", "--sessions", "all", "--language", "both")
            run = EvalRun.objects.filter(model=agent, judge="rules").order_by("-pk").first()
        ids.append(run.pk)
    return ids


def simulated_grade(*, verdict: dict | None, compiled_verdict: dict | None) -> str:
    if verdict and verdict.get("scored") and verdict.get("passed") is not None:
        return "pass" if verdict["passed"] else "fail"
    if compiled_verdict and compiled_verdict.get("scored"):
        return "pass" if compiled_verdict["passed"] else "fail"
    return "unsure"


def grade(sample) -> int:
    users = {u.username: u for u in get_user_model().objects.filter(username__in=GRADERS)}
    missing = set(GRADERS) - set(users)
    if missing:
        raise SystemExit(f"demo users missing ({', '.join(sorted(missing))}): run manage.py demo --no-serve first")
    items = list(sample.items.select_related("turn_result").order_by("position"))
    ours = compiled.verdicts_for({ci.turn_result for ci in items}, compile_checked=True)
    n = 0
    for name, flip in GRADERS.items():
        rng = random.Random(f"{SEED}:{name}")
        for ci in items:
            tr = ci.turn_result
            verdict = next((v for v in tr.verdicts or [] if int(v["idx"]) == ci.item), None)
            label = simulated_grade(verdict=verdict, compiled_verdict=ours.get((tr.pk, ci.item)))
            if label != "unsure" and rng.random() < flip:
                label = "fail" if label == "pass" else "pass"
            services.save_grade(sample=sample, turn_result=tr, item=ci.item, grader=users[name], label=label, note="")
            n += 1
    return n


def main() -> None:
    run_ids = ensure_runs()
    call_command("compile_rubrics", "--all", "--quiet")
    sample = services.draw_sample(name=SAMPLE, run_ids=run_ids, per_stratum=PER_STRATUM, seed=SEED)
    print(f"runs {run_ids}; sample {sample.name}: {sample.items.count()} items; grades written: {grade(sample)}")
    call_command("certify_judges", "--runs", ",".join(map(str, run_ids)))


if __name__ == "__main__":
    main()
