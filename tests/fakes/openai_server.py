"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for end-to-end tests of LLM callers.

The server answers ``POST /v1/chat/completions`` from a queue of scripted replies (status codes,
headers such as ``Retry-After``, delays longer than the client timeout, dropped connections, tool
calls, malformed JSON) and records every request it received::

    with FakeOpenAIServer() as server:
        server.push(error(429, "slow down", headers={"Retry-After": "1"}))
        server.push(completion(content="Hello"))
        ...  # point a client at server.base_url
        assert len(server.requests) == 2

When the queue is empty the optional ``responder(request_json)`` answers; without one the server
replies 418, which an LLM client does not retry, so a test fails fast on a missing script entry.

``GET /v1/models`` lists ``models`` (entries as dicts, or ids) when given, else answers 404 as an
endpoint without a model list does; ``GET /props`` answers ``props`` (llama.cpp's server properties,
e.g. its ``chat_template``) when given. These probes are recorded in ``probes``, not ``requests``.
"""

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

_ids = count(1)


@dataclass(frozen=True, kw_only=True)
class Scripted:
    """One reply. ``body``: a dict is sent as JSON, a str/bytes as is (to send malformed JSON)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False  # close the connection without any answer (a connection error for the client)


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


def tool_call(*, name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    """A tool call as the API sends it; pass ``arguments`` as a str to script malformed JSON."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id or f"call_{next(_ids)}", "type": "function", "function": {"name": name, "arguments": raw}}


def completion(
    *,
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    model: str = "fake-model",
    finish_reason: str | None = None,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    delay_s: float = 0.0,
) -> Scripted:
    """A successful chat completion with usage."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Scripted(body=body, delay_s=delay_s)


def error(status: int, message: str, *, headers: dict[str, str] | None = None, delay_s: float = 0.0) -> Scripted:
    """An error reply shaped like OpenAI's (``{"error": {"message": ...}}``)."""
    body = {"error": {"message": message, "type": "fake_error", "code": str(status)}}
    return Scripted(status=status, body=body, headers=headers or {}, delay_s=delay_s)


class _Server(ThreadingHTTPServer):
    # The default listen backlog (5) overflows when dozens of client threads connect at once; the
    # kernel then drops the handshake and the client waits a 1 s SYN retransmit.
    request_queue_size = 256
    daemon_threads = True


class FakeOpenAIServer:
    """Threaded HTTP server on an ephemeral 127.0.0.1 port; use as a context manager."""

    def __init__(
        self,
        *,
        responder: Callable[[Any], Scripted] | None = None,
        record: bool = True,
        models: list[dict[str, Any] | str] | None = None,
        props: dict[str, Any] | None = None,
    ) -> None:
        self.responder = responder
        self.models = models
        self.props = props
        self.probes: list[str] = []
        # Benchmarks turn recording off: thousands of kept request bodies make the server's garbage
        # collections (and so its replies) slower as the run goes on.
        self.record = record
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake OpenAI server is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *replies: Scripted) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive like a real endpoint: HTTP/1.0 would cost a TCP handshake per call.
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle on, the second waits for the
            # client's delayed ACK (~40 ms on Linux) — far more than the work being measured.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- request handling (runs in the server's threads) ---------------------------------------

    def _probe(self, handler: BaseHTTPRequestHandler) -> Scripted | None:
        """The answer to GET /v1/models or /props, or None for any other request."""
        path = handler.path.split("?")[0].rstrip("/")
        if handler.command != "GET" or not (path.endswith("/models") or path.endswith("/props")):
            return None
        with self._lock:
            self.probes.append(path)
        if path.endswith("/models") and self.models is not None:
            data = [
                {"id": m, "object": "model", "created": int(time.time()), "owned_by": "fake"}
                if isinstance(m, str)
                else {"object": "model", "created": int(time.time()), **m}
                for m in self.models
            ]
            return Scripted(body={"object": "list", "data": data})
        if path.endswith("/props") and self.props is not None:
            return Scripted(body=self.props)
        return error(404, f"fake OpenAI server: no route GET {handler.path}")

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        probe = self._probe(handler)
        if probe is not None:
            self._send(handler, probe)
            return
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode("utf-8", "replace")
        with self._lock:
            if self.record:
                self.requests.append(
                    RecordedRequest(
                        method=handler.command,
                        path=handler.path,
                        headers={k.lower(): v for k, v in handler.headers.items()},
                        json=payload,
                    )
                )
            reply = self._queue.popleft() if self._queue else None
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            reply = error(404, f"fake OpenAI server: no route {handler.command} {handler.path}")
        elif reply is None:
            reply = (
                self.responder(payload)
                if self.responder
                else error(418, "fake OpenAI server: no scripted response left")
            )
        self._send(handler, reply)

    def _send(self, handler: BaseHTTPRequestHandler, reply: Scripted) -> None:
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.drop:
            handler.close_connection = True
            return
        body = reply.body
        data = (
            body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        )
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout) before the delayed reply
