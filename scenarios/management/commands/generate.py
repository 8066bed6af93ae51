"""Generate benchmark sessions from the imported record: one Celery task per session slot."""

import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from scenarios import services
from scenarios.models import GenerationRun, RunStatus, Session
from scenarios.tasks import generate_session_task


def _choice_list(raw: str, *, allowed: tuple, name: str, cast=str) -> list:
    if raw == "all":
        return list(allowed)
    try:
        values = [cast(v.strip()) for v in raw.split(",") if v.strip()]
    except ValueError:
        raise CommandError(f"--{name} {raw!r}: expected 'all' or a comma-separated list of {allowed}") from None
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise CommandError(
            f"--{name} {raw!r}: unknown value(s) {bad}; choose 'all' or from {', '.join(map(str, allowed))}"
        )
    return values


class Command(BaseCommand):
    help = "Generate sessions spread evenly over scenarios × tiers (rules backend: deterministic, offline)."

    def add_arguments(self, parser):
        parser.add_argument("--scenario", default="all", help="all, or comma-separated scenario names")
        parser.add_argument("--tier", default="all", help="all, or comma-separated tiers (1,2,3)")
        parser.add_argument("--n", type=int, default=12, help="number of sessions (default 12)")
        parser.add_argument("--backend", default="rules", choices=["rules"], help="generator backend")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="finish an interrupted run")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args, **opts):
        run = self._run(opts)
        slots = services.missing_slots(run=run)
        self.stdout.write(
            f"run {run.pk}: {run.requested} sessions ({len(slots)} to make) — "
            + ("in-process" if generate_session_task.app.conf.task_always_eager else "dispatched to Celery workers")
        )
        bar = tqdm(total=run.requested, initial=run.requested - len(slots), unit="session", disable=opts["quiet"])
        try:
            if generate_session_task.app.conf.task_always_eager:
                for slot in slots:
                    # No broker: run the task body here (same service the workers call).
                    services.generate_slot(run_id=run.pk, index=slot.index)
                    bar.update(1)
            else:
                self._follow_workers(run=run, slots=slots, bar=bar)
        except KeyboardInterrupt:
            bar.close()
            services.mark_run(run_id=run.pk, status=RunStatus.INTERRUPTED)
            raise CommandError(
                f"interrupted: resume with `manage.py generate --resume {run.pk}`", returncode=130
            ) from None
        bar.close()
        self._summary(services.refresh_run_counts(run_id=run.pk, finished=True))

    def _run(self, opts) -> GenerationRun:
        if opts["resume"] is not None:
            run = GenerationRun.objects.filter(pk=opts["resume"]).first()
            if run is None:
                raise CommandError(f"--resume {opts['resume']}: no such generation run")
            services.mark_run(run_id=run.pk, status=RunStatus.RUNNING)
            return run
        scenarios = _choice_list(opts["scenario"], allowed=services.ALL_SCENARIOS, name="scenario")
        tiers = _choice_list(opts["tier"], allowed=services.ALL_TIERS, name="tier", cast=int)
        try:
            return services.create_run(
                backend=opts["backend"], seed=opts["seed"], scenarios=scenarios, tiers=tiers, n=opts["n"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _follow_workers(self, *, run: GenerationRun, slots: list, bar: tqdm) -> None:
        for slot in slots:
            generate_session_task.delay(run.pk, slot.index)
        todo = {s.index for s in slots}
        while todo:
            time.sleep(0.5)
            run.refresh_from_db(fields=["errors"])
            done = set(Session.objects.filter(run=run, run_index__in=todo).values_list("run_index", flat=True))
            done |= {e["index"] for e in run.errors if e.get("index") in todo}
            bar.update(len(done))
            todo -= done

    def _summary(self, run: GenerationRun) -> None:
        self.stdout.write(
            f"run {run.pk} finished: {run.made} made, {run.rejected_by_gate} rejected by gate, "
            f"{len(run.errors)} without a fitting admission; tokens 0, cost $0 (rules backend)"
        )
        for gate, count in services.gate_reasons(run=run).most_common():
            self.stdout.write(f"  rejected by gate {gate}: {count}")
        for error in run.errors:
            self.stdout.write(f"  slot {error['index']}: {error['reason']} {error.get('detail', '')}".rstrip())
