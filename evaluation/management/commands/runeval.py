"""``manage.py runeval``: evaluate a model on the curated set (see docs/model-developers.md)."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.llm import LLMConfigError
from core.paths import probe_writable_dir
from evaluation.endpoints import prepare_endpoints, record_endpoints
from evaluation.executors import auto_processes, execute_run_in_processes, execute_run_on_workers
from evaluation.models import EvalRun, EvalStatus
from evaluation.playing import RunBusyError
from evaluation.protocols import (
    DEFAULT_PROTOCOL,
    LITERACIES,
    PROTOCOLS,
    RELEASE_LITERACY,
    RELEASE_MAX_TOKENS,
    RELEASE_TEMPERATURE,
    ProtocolError,
    default_max_steps,
)
from evaluation.protocols import check_options as check_protocol_options
from evaluation.reports import (
    build_summary,
    errors_line,
    summary_table,
    turn_progress,
    unscored_notice,
    write_outputs,
)
from evaluation.services import (
    RunOptions,
    create_run,
    default_output_dir,
    execute_run,
    expected_turns,
    rejudge_run,
)
from evaluation.setup import (
    EvalSetupError,
    build_agent,
    build_judge,
    check_requests,
    data_use_record,
    dataset_for_run,
    dataset_origin,
    load_dataset,
    parts_for_run,
)

BOTH = {"en": ("en",), "zh": ("zh",), "both": ("en", "zh")}
VARIANTS = {"implicit": ("implicit",), "explicit": ("explicit",), "both": ("implicit", "explicit")}


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise CommandError(f"--{name} must be at least 1, got {value}")
    return value


def _processes(text: str) -> int | str:
    """``auto`` or a whole number >= 1 (argparse reports the message as a usage error)."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--processes must be auto or a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--processes must be at least 1 (or auto), got {value}")
    return value


def _check_output(path: Path) -> None:
    """The output folder can be made and written to; else a CommandError naming it."""
    try:
        probe_writable_dir(path)
    except OSError as exc:
        raise CommandError(f"--output {path}: cannot write there ({exc.strerror or exc})") from None


def _preload(module: str) -> None:
    """Import ``module`` on a daemon thread (the import lock makes a later import wait for it)."""
    import importlib

    threading.Thread(target=importlib.import_module, args=(module,), name=f"preload-{module}", daemon=True).start()


class Command(BaseCommand):
    help = "Evaluate a model (OpenAI-compatible endpoint or a built-in rules:* baseline) on the benchmark."
    # The system checks load every URL pattern, view and admin module (seconds at start-up) and check
    # nothing an evaluation uses; ``manage.py check`` (and runserver, migrate, the tests) still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--model", help="Model name at the endpoint, or rules:oracle|rules:no-tools|rules:heuristic"
        )
        parser.add_argument("--base-url", help="OpenAI-compatible base URL (default: LLM_*_BASE_URL / OPENAI_BASE_URL)")
        parser.add_argument("--api-key-env", help="Name of the variable holding the API key (default OPENAI_API_KEY)")
        parser.add_argument(
            "--snapshot",
            default="auto",
            help="latest | vN | none (database sessions). Default: latest ready snapshot, else the database.",
        )
        parser.add_argument("--from-db", action="store_true", help="Same as --snapshot none.")
        parser.add_argument(
            "--sessions",
            choices=("approved", "all"),
            default="approved",
            help="Database sessions to evaluate without a snapshot: fully approved (default) or all (demo).",
        )
        parser.add_argument("--language", choices=tuple(BOTH), default="en")
        parser.add_argument("--variant", choices=tuple(VARIANTS), default="implicit")
        parser.add_argument("--trials", type=int, default=1)
        parser.add_argument("--concurrency", type=int, default=1, help="Sessions evaluated in parallel.")
        parser.add_argument("--judge", default="rules", help="rules, or a model name for the LLM judge")
        parser.add_argument("--judge-base-url", help="Endpoint of the LLM judge (default: --base-url)")
        parser.add_argument("--judge-api-key-env", help="Key variable of the LLM judge (default: --api-key-env)")
        parser.add_argument(
            "--protocol",
            choices=PROTOCOLS,
            default=DEFAULT_PROTOCOL,
            help="physreview (default): PhysReview's conditions. release: the released PhysAssistBench runner's "
            "(session tool schemas, compact observations, 8 steps, temperature 0.2, 1024 tokens, patient replay by "
            "call order, release cutoff bounds and judge inputs), to check numbers against the paper.",
        )
        parser.add_argument(
            "--literacy",
            choices=LITERACIES,
            help="--protocol release: the patient answers' health-literacy variant replayed (default high).",
        )
        parser.add_argument(
            "--max-steps",
            type=int,
            help="physreview: tool calls per turn (default 16); release: model steps per turn (default 8).",
        )
        parser.add_argument(
            "--max-tokens",
            type=int,
            help="Output tokens per model call (default: the endpoint's or the role's; 1024 under release).",
        )
        parser.add_argument("--temperature", type=float, help="Default: the endpoint's; 0.2 under release.")
        parser.add_argument("--reasoning-effort")
        parser.add_argument("--limit", type=int, help="Only the first N sessions.")
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="Finish an interrupted run.")
        parser.add_argument("--rejudge", type=int, metavar="RUN_ID", help="Rescore a run's answers with --judge.")
        parser.add_argument(
            "--workers",
            choices=("local", "celery"),
            default="local",
            help="local: a thread pool here; celery: one task per session job on Celery workers (same resume rules).",
        )
        parser.add_argument(
            "--processes",
            type=_processes,
            default="auto",
            help="With --workers local: spread the sessions over N local processes (the --concurrency threads "
            "are split between them), so model-client work and live tools are not limited to one interpreter lock. "
            "Default auto: one per CPU core with at least 8 threads each (PostgreSQL only; 1 on SQLite).",
        )
        parser.add_argument(
            "--live-patient",
            action="store_true",
            help="Answer patient tools with the record-grounded rules patient instead of replaying the gold answers "
            "(recorded in the manifest and on every patient call as replay=live; scores are then not comparable "
            "with replayed runs).",
        )
        parser.add_argument(
            "--judge-max-tokens",
            type=int,
            help="Output tokens per LLM-judge call (default LLM_JUDGE_MAX_TOKENS, else 2048; 0 = no limit). "
            "Kept for --resume.",
        )
        parser.add_argument(
            "--no-cache",
            action="store_true",
            help="Neither read nor write the response cache (model and judge) in this play; the cache key "
            "already includes the server's model fingerprint from GET /models.",
        )
        parser.add_argument("--output", help="Output folder (default VAR_DIR/runs/run-<id>).")
        parser.add_argument(
            "--log-format",
            choices=("jsonl", "inspect"),
            default="jsonl",
            help="inspect: also write the run as an Inspect AI .eval log in --output (inspect view opens it).",
        )
        parser.add_argument("--quiet", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **o: Any) -> None:
        if o["resume"] and o["rejudge"]:
            raise CommandError("--resume and --rejudge cannot be combined")
        if o["temperature"] is not None and not 0 <= o["temperature"] <= 2:
            raise CommandError(f"--temperature must be between 0 and 2, got {o['temperature']}")
        for name in ("trials", "concurrency"):
            _positive(name.replace("_", "-"), o[name])
        for name in ("max_steps", "max_tokens"):
            if o[name] is not None:
                _positive(name.replace("_", "-"), o[name])
        if (o["resume"] or o["rejudge"]) and (o["literacy"] or o["protocol"] != DEFAULT_PROTOCOL):
            flag = "--resume" if o["resume"] else "--rejudge"
            raise CommandError(f"{flag} keeps the run's protocol from its manifest; drop --protocol/--literacy")
        try:
            check_protocol_options(protocol=o["protocol"], literacy=o["literacy"], live_patient=o["live_patient"])
        except ProtocolError as exc:
            raise CommandError(str(exc)) from None
        if o["processes"] == "auto":
            o["processes"] = auto_processes(concurrency=o["concurrency"]) if o["workers"] == "local" else 1
        elif o["workers"] != "local":
            raise CommandError("--processes applies to --workers local only")
        elif o["processes"] > o["concurrency"]:
            raise CommandError(f"--processes ({o['processes']}) cannot exceed --concurrency ({o['concurrency']})")
        if o["limit"] is not None:
            _positive("limit", o["limit"])
        if o["judge_max_tokens"] is not None and o["judge_max_tokens"] < 0:
            raise CommandError(f"--judge-max-tokens must be 0 (no limit) or more, got {o['judge_max_tokens']}")
        if o["output"]:
            _check_output(Path(o["output"]))  # before any turn is played (issue 36 F11)
        if o["model"] and not o["model"].startswith("rules:") and not o["rejudge"]:
            _preload("openai")  # the model client needs it: load it while the dataset streams in
        try:
            run = self._rejudge(o) if o["rejudge"] else self._run(o)
        except EvalSetupError as exc:
            raise CommandError(str(exc)) from None
        self._report(run, o)

    # --- modes -------------------------------------------------------------------------------------

    def _stored(self, run_id: int) -> EvalRun:
        run = EvalRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(f"there is no evaluation run {run_id}")
        return run

    def _run(self, o: dict[str, Any]) -> EvalRun:
        if o["resume"]:
            run = self._stored(o["resume"])
            if run.rejudge_of_id:
                raise CommandError(f"run {run.pk} is a rejudge; rejudge its source again instead of resuming it")
            # The endpoint may have moved since (another port or host): --base-url overrides the stored one.
            agent, judge, dataset, options = parts_for_run(
                run,
                base_url=o["base_url"],
                api_key_env=o["api_key_env"],
                concurrency=o["concurrency"],
                judge_base_url=o["judge_base_url"],
            )
            llm = self._endpoints(agent, judge, o, stored=run.manifest.get("llm"))
            record_endpoints(run=run, llm={**llm, "data_use": data_use_record(agent, judge, dataset=dataset)})
        else:
            if not o["model"]:
                raise CommandError("--model is required (or --resume RUN_ID / --rejudge RUN_ID)")
            release = o["protocol"] == "release"
            if release:  # the released runner's values unless given
                o["temperature"] = RELEASE_TEMPERATURE if o["temperature"] is None else o["temperature"]
                o["max_tokens"] = o["max_tokens"] or RELEASE_MAX_TOKENS
            options = RunOptions(
                languages=BOTH[o["language"]],
                variants=VARIANTS[o["variant"]],
                trials=o["trials"],
                max_steps=o["max_steps"] or default_max_steps(o["protocol"]),
                concurrency=o["concurrency"],
                temperature=o["temperature"],
                reasoning_effort=o["reasoning_effort"],
                limit=o["limit"],
                live_patient=o["live_patient"],
                processes=o["processes"],
                protocol=o["protocol"],
                literacy=(o["literacy"] or RELEASE_LITERACY) if release else None,
                max_tokens=o["max_tokens"],
            )
            snapshot = "none" if o["from_db"] else o["snapshot"]
            dataset = load_dataset(snapshot=snapshot, sessions=o["sessions"], limit=o["limit"])
            check_requests(dataset, languages=options.languages, variants=options.variants)
            # MIMIC-derived sessions go only where the data-use rule allows (core.llm.data_use): checked as the
            # clients are built, before the endpoint is probed or reached.
            origin = dataset_origin(dataset=dataset)
            agent, endpoint = build_agent(
                model=o["model"],
                base_url=o["base_url"],
                api_key_env=o["api_key_env"],
                temperature=o["temperature"],
                reasoning_effort=o["reasoning_effort"],
                concurrency=o["concurrency"],
                max_tokens=options.max_tokens,
                origin=origin,
            )
            judge = self._judge(o["judge"], o, o["base_url"], protocol=options.protocol, origin=origin)
            llm = self._endpoints(agent, judge, o, stored=None)  # before the run exists: a bad model name stops here
            run = create_run(agent=agent, judge=judge, dataset=dataset, options=options, endpoint=endpoint)
            record_endpoints(run=run, llm={**llm, "data_use": data_use_record(agent, judge, dataset=dataset)})
        total_turns = expected_turns(dataset=dataset, options=options)
        if not o["quiet"]:
            self.stdout.write(
                f"Run {run.pk}: {run.model} on {dataset.label} ({len(dataset.sessions)} sessions, "
                f"{'/'.join(options.languages)}, {'/'.join(options.variants)}, {options.trials} trial(s)), "
                f"judge {run.judge}, protocol {options.protocol}"
            )
        with self._progress(total_turns, o) as progress:
            try:
                if o["workers"] == "celery":
                    execute_run_on_workers(run=run, dataset=dataset, options=options, progress=progress)
                elif o["processes"] > 1:
                    execute_run_in_processes(
                        run=run,
                        agent=agent,
                        judge=judge,
                        dataset=dataset,
                        options=options,
                        processes=o["processes"],
                        progress=progress,
                    )
                else:
                    execute_run(run=run, agent=agent, judge=judge, dataset=dataset, options=options, progress=progress)
            except RunBusyError as exc:
                raise CommandError(str(exc)) from None
            except RuntimeError as exc:
                raise CommandError(f"{exc}; continue with: manage.py runeval --resume {run.pk}") from None
            except KeyboardInterrupt:
                raise CommandError(f"interrupted; continue with: manage.py runeval --resume {run.pk}") from None
        return run

    def _endpoints(self, agent: Any, judge: Any, o: dict[str, Any], *, stored: dict[str, Any] | None) -> dict:
        """Preflight of the run's endpoints (model served?), ``--no-cache`` / ``--judge-max-tokens``."""
        try:
            llm, warnings = prepare_endpoints(
                agent=agent,
                judge=judge,
                no_cache=o["no_cache"],
                judge_max_tokens=o["judge_max_tokens"],
                stored=stored,
            )
        except LLMConfigError as exc:
            raise CommandError(str(exc)) from None
        for warning in warnings:
            self.stderr.write(f"warning: {warning}")
        return llm

    def _judge(self, name: str, o: dict[str, Any], base_url: str | None, *, protocol: str, origin: str) -> Any:
        return build_judge(
            judge=name,
            base_url=o["judge_base_url"] or base_url,
            api_key_env=o["judge_api_key_env"] or o["api_key_env"],
            concurrency=o["concurrency"],
            protocol=protocol,
            origin=origin,
        )

    def _rejudge(self, o: dict[str, Any]) -> EvalRun:
        source = self._stored(o["rejudge"])
        dataset = dataset_for_run(source.manifest)
        # A rejudge keeps the source run's protocol (its judge inputs follow it).
        protocol = (source.manifest.get("parameters") or {}).get("protocol") or DEFAULT_PROTOCOL
        stored_url = (source.manifest.get("endpoint") or {}).get("base_url")
        judge = self._judge(o["judge"], o, stored_url, protocol=protocol, origin=dataset_origin(dataset=dataset))
        with self._progress(source.turn_results.count(), o) as progress:
            return rejudge_run(source=source, judge=judge, dataset=dataset, progress=progress)

    # --- output ------------------------------------------------------------------------------------

    def _progress(self, total: int, o: dict[str, Any]) -> Any:
        return turn_progress(total=total, quiet=o["quiet"], file=self.stderr._out)

    def _report(self, run: EvalRun, o: dict[str, Any]) -> None:
        run.refresh_from_db()
        summary = build_summary(run=run)
        output = Path(o["output"]) if o["output"] else default_output_dir(run)
        try:
            summary_path, turns_path = write_outputs(run=run, output_dir=output, summary=summary)
            if o["log_format"] == "inspect":
                from evaluation.inspect_log import write_inspect_log

                self.stdout.write(f"inspect: {write_inspect_log(run=run, output_dir=output, summary=summary)}")
        except OSError as exc:
            raise CommandError(
                f"run {run.pk}: its results are stored, but {output} could not be written ({exc}); "
                f"runeval --resume {run.pk} --output DIR writes them"
            ) from None
        if not o["quiet"]:
            from rich.console import Console

            Console(file=self.stdout._out, width=160).print(summary_table(summary))
            if notice := unscored_notice(summary):
                self.stdout.write(notice)
            self.stdout.write(errors_line(summary))
        self.stdout.write(f"summary: {summary_path}\nturns:   {turns_path}")
        pending = summary["pending"]
        if run.status == EvalStatus.PARTIAL:
            # Not a finished run: say so with a non-zero exit, and how to complete it.
            raise CommandError(
                f"run {run.pk} is partial: {pending['turns']} turns pending ({pending['not_played']} not played, "
                f"{pending['infra_error']} ended with an infrastructure error) — runeval --resume {run.pk}"
            )
