"""Bench: prompt tokens per turn under ``runeval --protocol physreview`` and ``--protocol release``.

    .venv/bin/python bench/protocol_tokens.py [--language en|zh|both] [--limit N] [--model rules:oracle]

Needs a database with the demo (``manage.py demo --no-serve``; the default SQLite file works). Each
protocol plays the same sessions with the same built-in agent (``rules:oracle`` by default: the gold
calls, then the gold answer), so the difference is the protocol's alone: prompts, tool schemas,
observation format (full FHIR JSON against the release's compact text) and step structure.

What is counted: every model call's request as the agent loop hands it to the client, tokenised with
``o200k_base`` (the GPT-4o family's vocabulary; ``bpe-openai`` has it compiled in, so no download):
each message's content and tool-call arguments, 3 tokens of chat framing per message and 3 to prime
the reply (the OpenAI cookbook's count for chat models), and the tool list as the JSON the client
sends. A server renders tools in its own template, so the tool part is an approximation of what it
bills; the observation part (tool messages) is exact text. Prompt tokens of a turn = the sum over
its model calls (what an endpoint bills). The bench's runs are deleted afterwards.
"""

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
MESSAGE_FRAMING = 3
REPLY_PRIMING = 3


class Counter:
    def __init__(self) -> None:
        from bpe_openai import get_encoding

        self.encoding = get_encoding("o200k_base")
        self._tools: dict[int, int] = {}

    def text(self, value: Any) -> int:
        if not value:
            return 0
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return len(self.encoding.encode(text))

    def message(self, message: dict[str, Any]) -> int:
        tokens = MESSAGE_FRAMING + self.text(message.get("role")) + self.text(message.get("content"))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            tokens += self.text(function.get("name")) + self.text(function.get("arguments"))
        return tokens

    def tools(self, tools: Any) -> int:
        # The loop passes the same tuple object every call (per language or per session): count it once.
        key = id(tools)
        if key not in self._tools:
            self._tools[key] = self.text(list(tools or []))
        return self._tools[key]


class CountingAgent:
    """Delegates to a built-in agent and records the tokens of every request it is handed."""

    def __init__(self, *, inner: Any, counter: Counter) -> None:
        self.inner, self.counter, self.name = inner, counter, inner.name
        self.calls: list[dict[str, Any]] = []

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def respond(self, request: Any) -> Any:
        messages = request.messages
        observations = sum(self.counter.message(m) for m in messages if m.get("role") == "tool")
        text = sum(self.counter.message(m) for m in messages) + REPLY_PRIMING
        tools = self.counter.tools(request.tools) if request.tools else 0
        self.calls.append(
            {
                "key": (request.session.session_id, request.language, request.turn.index),
                "prompt": text + tools,
                "tools": tools,
                "observations": observations,
                "system": sum(self.counter.message(m) for m in messages if m.get("role") == "system"),
            }
        )
        return self.inner.respond(request)


def measure(*, protocol: str, dataset: Any, languages: tuple[str, ...], model: str, counter: Counter) -> dict:
    from evaluation.judges.rules import RulesJudge
    from evaluation.models import EvalRun
    from evaluation.services import RunOptions, create_run, execute_run
    from evaluation.setup import rules_agent

    agent = CountingAgent(inner=rules_agent(model), counter=counter)
    options = RunOptions(languages=languages, protocol=protocol)
    judge = RulesJudge()
    run = create_run(agent=agent, judge=judge, dataset=dataset, options=options, endpoint=None)
    try:
        execute_run(run=run, agent=agent, judge=judge, dataset=dataset, options=options)
        run.refresh_from_db()
        status = run.status
    finally:
        EvalRun.objects.filter(pk=run.pk).delete()
    per_turn: dict[tuple, dict[str, int]] = {}
    for call in agent.calls:
        turn = per_turn.setdefault(call["key"], {"prompt": 0, "calls": 0, "tools": 0, "first_obs": None})
        turn["prompt"] += call["prompt"]
        turn["tools"] += call["tools"]
        turn["calls"] += 1
        # The turn's own observations: tool messages its last request holds beyond its first (under
        # release the history carries earlier turns' tool results too; those are in "prompt").
        if turn["first_obs"] is None:
            turn["first_obs"] = call["observations"]
        turn["observations"] = call["observations"] - turn["first_obs"]
    return {"status": status, "turns": per_turn, "calls": agent.calls}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, result: dict) -> dict[str, float]:
    prompts = [t["prompt"] for t in result["turns"].values()]
    calls = [t["calls"] for t in result["turns"].values()]
    tools = [c["tools"] for c in result["calls"]]
    figures = {
        "turns": len(prompts),
        "calls_per_turn": statistics.mean(calls),
        "mean": statistics.mean(prompts),
        "median": statistics.median(prompts),
        "p90": _pct(prompts, 0.9),
        "tools_per_call": statistics.mean(tools),
        "system": statistics.mean(c["system"] for c in result["calls"]),
    }
    print(
        f"{name:<11} {result['status']:<9} {figures['turns']:>5} {figures['calls_per_turn']:>10.2f} "
        f"{figures['mean']:>10.0f} {figures['median']:>8.0f} {figures['p90']:>8.0f} "
        f"{figures['tools_per_call']:>10.0f} {figures['system']:>8.0f}"
    )
    return figures


def observation_ratio(physreview: dict, release: dict) -> tuple[int, int]:
    keys = set(physreview["turns"]) & set(release["turns"])
    return (
        sum(physreview["turns"][k]["observations"] for k in keys),
        sum(release["turns"][k]["observations"] for k in keys),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", choices=("en", "zh", "both"), default="both")
    parser.add_argument("--limit", type=int, help="only the first N sessions")
    parser.add_argument("--model", default="rules:oracle", help="a built-in agent: rules:oracle|rules:heuristic")
    args = parser.parse_args()
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if not args.model.startswith("rules:"):
        parser.error("--model must be a built-in rules:* agent (the bench makes no model calls)")

    import django

    django.setup()
    from evaluation.dataset import from_sessions
    from scenarios.models import Session

    dataset = from_sessions(Session.objects.all()).limited(args.limit)
    if not dataset.sessions:
        print("no sessions in the database: run `manage.py demo --no-serve` first", file=sys.stderr)
        return 1
    languages = ("en", "zh") if args.language == "both" else (args.language,)
    counter = Counter()
    print(
        f"{len(dataset.sessions)} sessions, {'/'.join(languages)}, agent {args.model}; tokens: o200k_base "
        f"(bpe-openai), {MESSAGE_FRAMING} per message + {REPLY_PRIMING} reply priming + tool list JSON"
    )
    print(
        f"{'protocol':<11} {'status':<9} {'turns':>5} {'calls/turn':>10} {'mean/turn':>10} {'median':>8} "
        f"{'p90':>8} {'tools/call':>10} {'system':>8}"
    )
    results, figures = {}, {}
    for protocol in ("physreview", "release"):
        results[protocol] = measure(
            protocol=protocol, dataset=dataset, languages=languages, model=args.model, counter=counter
        )
        figures[protocol] = report(protocol, results[protocol])
    ratio = figures["release"]["mean"] / figures["physreview"]["mean"]
    obs_p, obs_r = observation_ratio(results["physreview"], results["release"])
    print(f"release / physreview, mean prompt tokens per turn: {ratio:.2f}×")
    if obs_p:
        print(
            f"observation tokens (tool messages, same turns): physreview {obs_p}, release {obs_r} "
            f"({obs_r / obs_p:.2f}×)"
        )
    for lang in languages:
        per = {
            p: statistics.mean(t["prompt"] for k, t in results[p]["turns"].items() if k[1] == lang)
            for p in ("physreview", "release")
        }
        print(f"  {lang}: physreview {per['physreview']:.0f}, release {per['release']:.0f} per turn")
    indices = sorted({k[2] for r in results.values() for k in r["turns"]})
    for index in indices:
        per = {
            p: statistics.mean(t["prompt"] for k, t in results[p]["turns"].items() if k[2] == index)
            for p in ("physreview", "release")
        }
        print(f"  turn {index + 1}: physreview {per['physreview']:.0f}, release {per['release']:.0f}")
    failed = [p for p, r in results.items() if r["status"] != "finished"]
    if failed:
        print(f"run(s) did not finish: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
