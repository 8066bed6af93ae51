"""Generate benchmark sessions from the imported record: one Celery task per session slot."""

import time
from collections import Counter

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core import jobs
from scenarios import recovery, services
from scenarios.generation.llm_roles import LLMSetupError, check_llm_setup
from scenarios.generation.reasons import attempt_lines, shorten, summarize
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
    help = (
        "Generate sessions spread evenly over scenarios × tiers (rules backend: deterministic, offline; "
        "openai backend: LLM_GENERATOR_/LLM_TRANSLATOR_/LLM_JUDGE_* settings, checked before any work)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--scenario", default="all", help="all, or comma-separated scenario names")
        parser.add_argument("--tier", default="all", help="all, or comma-separated tiers (1,2,3)")
        parser.add_argument("--n", type=int, default=12, help="number of sessions (default 12)")
        parser.add_argument("--backend", default="rules", choices=["rules", "openai"], help="generator backend")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="finish an interrupted run")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
        parser.add_argument(
            "--wait-timeout",
            type=int,
            default=None,
            metavar="SECONDS",
            help="with workers: when no slot has finished for this long, dispatch the missing slots again, and "
            "after JOB_MAX_AUTO_RESUMES such attempts fail the run (default JOB_STALE_SECONDS)",
        )

    def handle(self, *args, **opts):
        # Runs whose command died (heartbeat stale) are finished, resumed or failed first (scenarios.recovery).
        for line in recovery.recover_stale():
            self.stderr.write(f"stale {line}")
        run = self._run(opts)
        running = GenerationRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING)
        jobs.touch(queryset=running)
        with jobs.Heartbeat(queryset=running):
            self._generate(run=run, opts=opts)

    def _generate(self, *, run: GenerationRun, opts: dict) -> None:
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
                    if services.generate_slot(run_id=run.pk, index=slot.index) is None:
                        self._stop_on_llm_error(run=run, index=slot.index, bar=bar)
                    bar.update(1)
            else:
                wait_s = opts["wait_timeout"] or settings.JOB_STALE_SECONDS
                self._follow_workers(run=run, slots=slots, bar=bar, wait_s=wait_s)
        except KeyboardInterrupt:
            bar.close()
            services.mark_run(run_id=run.pk, status=RunStatus.INTERRUPTED)
            raise CommandError(
                f"interrupted: resume with `manage.py generate --resume {run.pk}`", returncode=130
            ) from None
        bar.close()
        run = services.refresh_run_counts(run_id=run.pk, finished=True)
        self._summary(run, verbosity=opts["verbosity"])
        if failed := [e["index"] for e in run.errors if e.get("reason") == services.LLM_ERROR]:
            # Workers kept going past an endpoint failure; the run is not complete until a resume.
            services.mark_run(run_id=run.pk, status=RunStatus.INTERRUPTED)
            raise CommandError(
                f"{len(failed)} slot(s) failed on the LLM endpoint: resume with `manage.py generate --resume {run.pk}`"
            )
        if run.made < run.requested:
            raise CommandError(self._shortfall(run))

    def _run(self, opts) -> GenerationRun:
        if opts["resume"] is not None:
            run = GenerationRun.objects.filter(pk=opts["resume"]).first()
            if run is None:
                raise CommandError(f"--resume {opts['resume']}: no such generation run")
            if run.backend == "openai":
                self._check_llm(quiet=opts["quiet"])
            services.reopen_llm_errors(run_id=run.pk)
            services.mark_run(run_id=run.pk, status=RunStatus.RUNNING)
            GenerationRun.objects.filter(pk=run.pk).update(resumes=0, stop_reason="")
            return run
        scenarios = _choice_list(opts["scenario"], allowed=services.ALL_SCENARIOS, name="scenario")
        tiers = _choice_list(opts["tier"], allowed=services.ALL_TIERS, name="tier", cast=int)
        if opts["backend"] == "openai":
            self._check_llm(quiet=opts["quiet"])
        try:
            return services.create_run(
                backend=opts["backend"], seed=opts["seed"], scenarios=scenarios, tiers=tiers, n=opts["n"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _check_llm(self, *, quiet: bool) -> None:
        """Configuration, key and endpoint of every role, before a run row or any session exists."""
        try:
            lines = check_llm_setup()
        except LLMSetupError as exc:
            raise CommandError(f"--backend openai: {exc}") from None
        if not quiet:
            for line in lines:
                self.stdout.write(line)

    def _stop_on_llm_error(self, *, run: GenerationRun, index: int, bar: tqdm) -> None:
        run.refresh_from_db(fields=["errors"])
        error = next((e for e in run.errors if e.get("index") == index), None)
        if error is None or error.get("reason") != services.LLM_ERROR:
            return  # no fitting admission: recorded, the run goes on
        bar.close()
        services.mark_run(run_id=run.pk, status=RunStatus.INTERRUPTED)
        done = services.refresh_run_counts(run_id=run.pk, finished=False)
        raise CommandError(
            f"slot {index}: {error.get('detail', 'LLM request failed')}\n"
            f"stopped after {done.made + done.rejected_by_gate} stored session(s); "
            f"resume with `manage.py generate --resume {run.pk}`"
        )

    def _follow_workers(self, *, run: GenerationRun, slots: list, bar: tqdm, wait_s: int) -> None:
        """Dispatch the slots and wait for each to end (a session or a recorded failure). Says what it waits for
        every ``wait_s / 2`` seconds without progress; after ``wait_s`` without any slot ending it dispatches the
        missing slots again (a lost task: its worker was killed), and after ``JOB_MAX_AUTO_RESUMES`` of those
        marks the run ``failed`` with the slots it still lacks."""
        for slot in slots:
            generate_session_task.delay(run.pk, slot.index)
        todo = {s.index for s in slots}
        last = said = time.monotonic()
        redispatched = 0
        while todo:
            time.sleep(0.5)
            run.refresh_from_db(fields=["errors"])
            done = set(Session.objects.filter(run=run, run_index__in=todo).values_list("run_index", flat=True))
            done |= {e["index"] for e in run.errors if e.get("index") in todo}
            bar.update(len(done))
            todo -= done
            now = time.monotonic()
            if done:
                last = said = now
            if not todo:
                break
            if now - said >= wait_s / 2:
                said = now
                self.stderr.write(
                    f"run {run.pk}: waiting for {len(todo)} slot(s) ({recovery.short_slots(sorted(todo))}); "
                    f"none finished for {now - last:.0f} s"
                )
            if now - last < wait_s:
                continue
            if redispatched >= settings.JOB_MAX_AUTO_RESUMES:
                reason = (
                    f"no slot finished for {wait_s} s after {redispatched} re-dispatch(es); slot(s) "
                    f"{recovery.short_slots(sorted(todo))} still missing. Is a Celery worker running? "
                    f"Resume with `manage.py generate --resume {run.pk}`"
                )
                bar.close()
                services.refresh_run_counts(run_id=run.pk, finished=False)
                GenerationRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, stop_reason=reason)
                raise CommandError(f"run {run.pk} failed: {reason}")
            redispatched += 1
            for index in sorted(todo):
                generate_session_task.delay(run.pk, index)
            missing = recovery.short_slots(sorted(todo))
            self.stderr.write(
                f"run {run.pk}: no slot finished for {wait_s} s; dispatched slot(s) {missing} "
                f"again ({redispatched}/{settings.JOB_MAX_AUTO_RESUMES})"
            )
            last = said = now

    def _summary(self, run: GenerationRun, *, verbosity: int = 1) -> None:
        if run.backend == "openai":
            cost = "cost unknown (a model has no price)" if run.cost_usd is None else f"cost ${run.cost_usd}"
            usage = f"tokens {run.prompt_tokens} prompt + {run.completion_tokens} completion, {cost}"
        else:
            usage = "tokens 0, cost $0 (rules backend)"
        llm_errors = sum(e.get("reason") == services.LLM_ERROR for e in run.errors)
        failed = f", {llm_errors} failed on the LLM endpoint (resume to retry)" if llm_errors else ""
        self.stdout.write(
            f"run {run.pk} finished: {run.made} made, {run.rejected_by_gate} rejected by gate, "
            f"{len(run.errors) - llm_errors} without a fitting admission{failed}; {usage}"
        )
        for gate, count in services.gate_reasons(run=run).most_common():
            self.stdout.write(f"  rejected by gate {gate}: {count}")
        for error in run.errors:
            self.stdout.write(f"  slot {error['index']}: {error['reason']} {error.get('detail', '')}".rstrip())
        if not run.rejections:
            return
        slots = len({r["index"] for r in run.rejections})
        attempts = len({(r["index"], r["attempt"]) for r in run.rejections})
        self.stdout.write(f"why attempts were rejected ({attempts} attempt(s) in {slots} slot(s)), by gate:")
        for gate in summarize(rejections=run.rejections):
            self.stdout.write(f"  {gate.gate}: {gate.attempts} attempt(s), {gate.failures} failure(s)")
            for reason in gate.reasons:
                self.stdout.write(f"    - {reason}")
        if verbosity >= 2:
            self.stdout.write("per attempt:")
            for line in attempt_lines(rejections=run.rejections):
                self.stdout.write(f"  {line}")
        else:
            self.stdout.write("  (every attempt: -v 2; stored on the run as GenerationRun.rejections)")

    def _shortfall(self, run: GenerationRun) -> str:
        """Why fewer sessions than asked: the counts, and the most frequent gate with its first reason."""
        parts = []
        if run.rejected_by_gate:
            gates = summarize(rejections=run.rejections)
            top = f" (mostly {gates[0].gate}: {shorten(gates[0].reasons[0], limit=240)})" if gates else ""
            parts.append(f"{run.rejected_by_gate} rejected by gate{top}")
        for reason, count in Counter(e.get("reason", "error") for e in run.errors).items():
            label = "without a fitting admission" if reason == "no_candidate" else reason.replace("_", " ")
            parts.append(f"{count} {label}")
        why = "; ".join(parts) or "no session stored"
        return f"made {run.made} of {run.requested} requested session(s): {why}. Reasons above; run {run.pk}."
