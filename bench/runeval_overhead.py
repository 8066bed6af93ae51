"""Bench: what the runeval harness adds to model latency.

    DATABASE_URL=... .venv/bin/python bench/runeval_overhead.py [--turns 1296] [--latency 0.2] [--concurrency 32]
        [--processes auto|N]   # (b) as runeval's --processes (default auto, as runeval: one per core)

Needs a database with the demo (``manage.py demo --no-serve``): its sessions are cloned under new
session ids until the set has at least ``--turns`` turns (1,296 = the released set's size), so every
tool call still runs live against the EHR and patient replay works. The model is the scripted
OpenAI-compatible server of ``tests/fakes`` on 127.0.0.1, reached through the real ``openai`` client
(response cache off); each turn is one step with a lab search and ``prepare_to_answer``, then the answer.

The scripted server runs in its own process (as a real endpoint would), so it does not compete with
the harness for the interpreter lock; it keeps connections alive, answers with Nagle off and does not
record requests, so alone it stays within ~2% of the ideal at 32 × 200 ms.

(a) zero latency, concurrency 1: harness time per turn = (run wall time − time inside model calls −
    time inside the EHR tools) / turns: prompt building, replay, judging (rules), trace storage,
    bookkeeping. The EHR tools' own time (live SQL) is printed beside it. Target ≤ 5 ms.
(b) ``--latency`` per model call at ``--concurrency``: wall time against the issue's ideal, model
    calls × latency / concurrency. A session's turns (and the calls within a turn) are sequential and
    a job is a whole session, so a zero-overhead harness reaches that ideal only when the sessions
    fill whole rounds of ``--concurrency`` slots: 1,296 turns = 324 four-turn sessions on 32 slots
    need 11 rounds (17.6 s), not 10.125 (16.2 s), because the last 4 sessions run alone. So (b)
    rounds the set up to whole rounds (352 sessions, 1,408 turns by default; ``--no-full-rounds``
    keeps the (a) set) and prints the zero-overhead schedule beside the ideal. Target ≤ 1.15×.
(c) the whole command: ``manage.py runeval`` as a child process on ``--command-sessions`` database
    sessions (the demo's, cloned in the database when there are too few) at ``--latency`` and
    ``--concurrency``: wall time from process start to exit (imports, set-up, dataset load, play,
    report) against the ideal and the zero-overhead schedule, and harness seconds = wall − model −
    tools; the fixed cost is the same command on one session at zero latency. Target ≤ 1.25× the
    schedule, fixed cost ≤ 1.5 s.
(d) peak memory of the whole command (the process and its forked workers) at zero latency over
    ``--memory-sizes`` sessions (default 48 and 480): it should not grow with the set.

``--parts`` picks which of a, b, c, d run (default all).

The bench's runs are deleted afterwards.
"""

import argparse
import contextlib
import dataclasses
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
KEY_ENV = "RUNEVAL_BENCH_KEY"
TARGET_HARNESS_MS = 5.0
TARGET_RATIO = 1.15
TARGET_COMMAND_RATIO = 1.25
TARGET_FIXED_S = 1.5


class Measured(NamedTuple):
    wall: float
    model_s: float
    tools_s: float
    calls: int
    turns: int
    errors: int
    cpu_s: float  # CPU time of the harness (this process and its worker processes) during the run
    job_calls: list[int]  # model calls per job (session), for the schedule bound


def _responder(delay_s: float):
    from tests.fakes.openai_server import completion, tool_call

    def respond(payload):
        if payload.get("tool_choice") == "none":
            return completion(content="Creatinine 1.4 mg/dL on the latest draw.", delay_s=delay_s)
        calls = [
            tool_call(name="Observation__search", arguments={"code": "creatinine", "_count": 3}),
            tool_call(name="prepare_to_answer", arguments={}),
        ]
        return completion(tool_calls=calls, delay_s=delay_s)

    return respond


def serve(delay_s: float) -> int:
    """Child process: serve the script, print the base URL, stop when stdin closes."""
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(responder=_responder(delay_s), record=False) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
    return 0


@contextlib.contextmanager
def server_process(delay_s: float):
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(delay_s)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def _dataset(min_turns: int, *, sessions_multiple_of: int = 1):
    from evaluation.dataset import EvalDataset, content_checksum, from_sessions
    from scenarios.models import Session

    base = from_sessions(Session.objects.all())
    if not base.sessions:
        raise SystemExit("no sessions in the database: run `manage.py demo --no-serve` first")
    sessions, copy = [], 0
    wanted = -(-min_turns // min(len(s.turns) for s in base.sessions)) + sessions_multiple_of
    while len(sessions) < wanted:
        sessions.extend(dataclasses.replace(s, session_id=f"{s.session_id}~{copy}") for s in base.sessions)
        copy += 1
    turns = 0
    chosen = []
    for s in sessions:  # stop at the first session that reaches the target (and fills the last round)
        chosen.append(s)
        turns += len(s.turns)
        if turns >= min_turns and len(chosen) % sessions_multiple_of == 0:
            break
    return EvalDataset("db", "bench", None, content_checksum(chosen), tuple(chosen))


def _run(*, dataset, base_url: str, concurrency: int, processes: int = 1):
    from core.llm import LLMClient
    from evaluation.agents.llm import OpenAIAgent, llm_config
    from evaluation.executors import execute_run_in_processes
    from evaluation.judges.rules import RulesJudge
    from evaluation.models import EvalRun
    from evaluation.services import RunOptions, create_run

    config = llm_config(
        model="bench-model", base_url=base_url, api_key_env=KEY_ENV, temperature=None, concurrency=concurrency
    )
    agent = OpenAIAgent(client=LLMClient(config=config))
    judge = RulesJudge()
    options = RunOptions(concurrency=concurrency)
    run = create_run(agent=agent, judge=judge, dataset=dataset, options=options, endpoint=None)
    started, cpu_started = time.perf_counter(), _cpu_s()
    execute_run_in_processes(run=run, agent=agent, judge=judge, dataset=dataset, options=options, processes=processes)
    wall = time.perf_counter() - started
    cpu_s = _cpu_s() - cpu_started
    rows = list(run.turn_results.values_list("session_id", "trace"))
    traces = [t for _, t in rows]
    per_session: dict[str, int] = {}
    for session_id, t in rows:
        per_session[session_id] = per_session.get(session_id, 0) + t["usage"]["model_calls"]
    model_s = sum(t["usage"]["model_latency_s"] for t in traces)
    tools_s = sum(t["timing"]["tools_s"] for t in traces)
    calls = sum(t["usage"]["model_calls"] for t in traces)
    errors = sum(bool(t.get("infra_error")) for t in traces)
    EvalRun.objects.filter(pk=run.pk).delete()
    agent.client.close()
    return Measured(wall, model_s, tools_s, calls, len(traces), errors, cpu_s, list(per_session.values()))


def _cpu_s() -> float:
    """CPU time of this process and of its reaped children (the runeval worker processes with
    ``--processes``; the scripted server of the same phase is reaped only after the run)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def schedule_bound(*, job_calls: list[int], latency_s: float, slots: int) -> float:
    """Wall time of a harness with zero overhead: a job's calls are sequential (turns follow each
    other), so each job lasts calls × latency, and whole jobs are placed on ``slots`` parallel slots
    longest first (LPT, which is optimal when the jobs are equally long, as the cloned demo ones are).
    """
    finish = [0.0] * slots
    for calls in sorted(job_calls, reverse=True):
        i = min(range(slots), key=finish.__getitem__)
        finish[i] += calls * latency_s
    return max(finish, default=0.0)


def _whole_command(args) -> None:
    """(c) and (d), smallest set first: the database holds only as many sessions as the step needs
    (rounded up to whole copies of the demo), as a runeval that read every session would show."""
    from bench.runeval_command import clone_sessions, compile_project, drop_clones, run_command

    compile_project()

    steps = [("d", int(x)) for x in args.memory_sizes.split(",")] if "d" in args.parts else []
    steps += [("c", args.command_sessions)] if "c" in args.parts else []
    drop_clones()
    peaks = []
    try:
        for part, size in sorted(steps, key=lambda step: step[1]):
            have = clone_sessions(total=size)
            if part == "d":
                with server_process(0.0) as base_url:
                    m = run_command(
                        base_url=base_url,
                        key_env=KEY_ENV,
                        concurrency=args.concurrency,
                        limit=size,
                        processes=args.processes,
                    )
                peaks.append((size, m.peak_rss_mb, m.wall, m.turns, have, m.cpu_s))
                continue
            with server_process(0.0) as base_url:
                fixed = run_command(base_url=base_url, key_env=KEY_ENV, concurrency=1, limit=1, processes="1")
            with server_process(args.latency) as base_url:
                m = run_command(
                    base_url=base_url,
                    key_env=KEY_ENV,
                    concurrency=args.concurrency,
                    limit=size,
                    processes=args.processes,
                )
            ideal = m.calls * args.latency / args.concurrency
            bound = schedule_bound(job_calls=m.job_calls, latency_s=args.latency, slots=args.concurrency)
            # Model and tool seconds are summed over the turns played side by side: per slot, divided by
            # the concurrency (the schedule then accounts for whole rounds).
            per_slot = (m.model_s + m.tools_s) / args.concurrency
            harness = m.wall - per_slot
            verdict = "OK" if m.wall / bound <= TARGET_COMMAND_RATIO else "OVER"
            print(
                f"(c) whole command: fixed cost (1 session, zero latency) {fixed.wall:.2f} s, CPU {fixed.cpu_s:.2f} s "
                f"(target <= {TARGET_FIXED_S} s) {'OK' if fixed.wall <= TARGET_FIXED_S else 'OVER'}; "
                f"{int(args.latency * 1000)} ms per call, concurrency {args.concurrency}: {m.turns} turns, "
                f"{m.calls} calls in {len(m.job_calls)} sessions, command wall {m.wall:.2f} s (CPU {m.cpu_s:.1f} s); "
                f"ideal {ideal:.2f} s, "
                f"schedule {bound:.2f} s -> {m.wall / ideal:.2f}x the ideal, {m.wall / bound:.2f}x the schedule "
                f"(target <= {TARGET_COMMAND_RATIO}x) {verdict}; harness s = wall - (model + tools) / concurrency = "
                f"{m.wall:.2f} - ({m.model_s:.1f} + {m.tools_s:.1f}) / {args.concurrency} = {harness:.2f} s; "
                f"fixed-cost run: wall {fixed.wall:.2f} s, model {fixed.model_s:.2f} s, tools {fixed.tools_s:.2f} s; "
                f"peak RSS {m.peak_rss_mb:.0f} MB; {have} sessions in the database"
            )
        if peaks:
            (n0, p0, *_), (n1, p1, *_) = peaks[0], peaks[-1]
            growth = (p1 - p0) / (n1 - n0) if n1 != n0 else 0.0
            shown = "; ".join(
                f"{n} sessions ({t} turns, {h} in the db): {p:.0f} MB in {w:.1f} s (CPU {c:.1f} s)"
                for n, p, w, t, h, c in peaks
            )
            print(f"(d) peak memory of the whole command at zero latency: {shown}; {growth:.3f} MB per extra session")
    finally:
        if not args.keep_clones:
            drop_clones()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1296)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--processes", default="auto", help="local worker processes for (b), as runeval's (auto|N)")
    parser.add_argument(
        "--no-full-rounds", action="store_true", help="(b) on the (a) set, not rounded up to whole rounds"
    )
    parser.add_argument("--parts", default="abcd", help="which parts to run (a, b, c, d)")
    parser.add_argument("--command-sessions", type=int, default=64, help="(c) sessions (64 demo ones = 256 turns)")
    parser.add_argument("--memory-sizes", default="48,480", help="(d) set sizes in sessions")
    parser.add_argument("--keep-clones", action="store_true", help="keep the sessions cloned for (c)/(d)")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve)
    os.environ[KEY_ENV] = "bench-key"
    os.environ["LLM_MODEL_UNDER_TEST_CACHE"] = "false"
    import django

    django.setup()
    from evaluation.executors import auto_processes

    processes = auto_processes(concurrency=args.concurrency) if args.processes == "auto" else int(args.processes)
    if "a" in args.parts:
        dataset = _dataset(args.turns)
        n_turns = sum(len(s.turns) for s in dataset.sessions)
        print(f"set: {len(dataset.sessions)} sessions, {n_turns} turns (demo sessions cloned)")

        with server_process(0.0) as base_url:
            m = _run(dataset=dataset, base_url=base_url, concurrency=1)
        harness_ms = 1000 * (m.wall - m.model_s - m.tools_s) / m.turns
        verdict = "OK" if harness_ms <= TARGET_HARNESS_MS else "OVER"
        print(
            f"(a) zero latency, concurrency 1: {m.turns} turns, {m.calls} model calls, wall {m.wall:.1f} s; per turn: "
            f"model calls {1000 * m.model_s / m.turns:.1f} ms, EHR tools {1000 * m.tools_s / m.turns:.1f} ms, "
            f"harness {harness_ms:.2f} ms (target <= {TARGET_HARNESS_MS} ms) {verdict}; infra errors {m.errors}"
        )

    if "b" in args.parts:
        if not args.no_full_rounds or "a" not in args.parts:
            dataset = _dataset(args.turns, sessions_multiple_of=args.concurrency)
        with server_process(args.latency) as base_url:
            m = _run(dataset=dataset, base_url=base_url, concurrency=args.concurrency, processes=processes)
        ideal = m.calls * args.latency / args.concurrency
        bound = schedule_bound(job_calls=m.job_calls, latency_s=args.latency, slots=args.concurrency)
        ratio = m.wall / ideal
        print(
            f"(b) {int(args.latency * 1000)} ms per call, concurrency {args.concurrency} over {processes} "
            f"process(es) (--processes {args.processes}): {m.turns} turns, {m.calls} calls in "
            f"{len(m.job_calls)} sessions, wall {m.wall:.1f} s; ideal (calls x latency / concurrency) {ideal:.1f} s, "
            f"zero-overhead schedule of these sessions {bound:.1f} s -> {ratio:.2f}x the ideal "
            f"(target <= {TARGET_RATIO}x) {'OK' if ratio <= TARGET_RATIO else 'OVER'}, "
            f"{m.wall / bound:.2f}x the schedule; "
            f"mean model call {1000 * m.model_s / m.calls:.0f} ms, tools {1000 * m.tools_s / m.turns:.1f} ms/turn; "
            f"harness CPU {m.cpu_s:.1f} s ({100 * m.cpu_s / m.wall:.0f}% of one core); infra errors {m.errors}"
        )
    if "c" in args.parts or "d" in args.parts:
        _whole_command(args)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
