"""Bench: 20 logged-in reviewers browsing and saving at once against gunicorn + PostgreSQL on 127.0.0.1.

    .venv/bin/python bench/review_load.py [--clients 20] [--seconds 30] [--warmup 3] [--think 0]
                                          [--workers 2xCORES+1] [--threads 4] [--cache redis|locmem]

1. Creates the PostgreSQL database ``physreview_bench`` (server from ``DATABASE_URL``, else
   127.0.0.1:5432 user postgres; exits non-zero when it cannot be reached) and prepares it with
   ``manage.py demo --no-serve`` (``PHYSREVIEW_VAR_DIR`` in a temporary folder), then makes
   ``--clients`` reviewers ``bench_reviewer_NN`` and distributes the demo sessions among them through
   ``annotations.services.distribute`` (two bench reviewers per session), then ``VACUUM ANALYZE`` and
   ``CHECKPOINT`` so that no vacuum or checkpoint of the bulk load runs during the measurement. The
   database is dropped and made again at every run, so every run starts from the same state.
2. Starts ``gunicorn physreview.wsgi`` (gthread workers, persistent database connections, DEBUG off)
   on a free 127.0.0.1 port. ``--cache redis`` (the default) gives the workers one shared fragment
   cache (``CACHE_URL`` = Redis database 14 on 127.0.0.1:6379, flushed first), as a multi-process
   deployment runs; ``--cache locmem`` keeps the default of one in-process cache per worker, where
   each worker renders every turn's content and evidence once itself.
3. Each client (a thread with its own keep-alive connection) logs in through the login form, then,
   for ``--seconds`` after a ``--warmup`` that is not counted, loops: queue → a turn from its queue
   → save a draft edit of that turn (the edit form's fields, ``base_version`` and CSRF token read
   from the page) → comment → next turn → history → dashboard. ``--think`` adds a pause after every
   response (exponential, that mean); the default 0 is a closed-loop stress test.
4. Prints per endpoint and overall: requests, p50/p95/max of the server time (``Server-Timing:
   app;dur``, time inside Django), of the server CPU time (``cpu;dur``: what a request costs whatever
   else runs on the machine) and of the client round trip, throughput and errors (a status
   outside 2xx/3xx, or an error banner / missing confirmation where a save should succeed).
   Target: server p95 ≤ 50 ms (printed MET/MISSED). Exits non-zero when there were errors.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
BENCH_DB = "physreview_bench"
TARGET_P95_MS = 50.0
PYTHON = sys.executable
ENDPOINTS = ("queue", "turn", "edit (draft)", "comment", "next turn", "history", "dashboard")
TURN_LINK = re.compile(r'href="(/review/turns/(\d+)/)"')
NEXT_LINK = re.compile(r'<a href="(/review/turns/\d+/)" id="next-link"')
EDIT_FORM = re.compile(r'<form\b[^>]*hx-post="[^"]*/edit/"[^>]*>.*?</form>', re.S)
CSRF_HEADER = re.compile(r"&quot;X-CSRFToken&quot;:\s*&quot;([^&]+)&quot;|\"X-CSRFToken\":\s*\"([^\"]+)\"")
SERVER_TIMING = re.compile(r"(?:^|,)\s*app;dur=([\d.]+)")
SERVER_CPU = re.compile(r"(?:^|,)\s*cpu;dur=([\d.]+)")
ERROR_BANNER = 'role="alert"'
OK_BANNER = 'role="status"'
EDIT_MARK = " (bench edit)"


# --- database and data --------------------------------------------------------------------------


def bench_database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        url = "postgres://postgres@127.0.0.1:5432/postgres"
    return urlunsplit(urlsplit(url)._replace(scheme="postgres", path=f"/{BENCH_DB}", query=""))


def create_database(url: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(scheme="postgresql", path="/postgres"))
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            # A fresh database every run: the same starting state, whatever an earlier run or demo left.
            conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    except psycopg.OperationalError as exc:
        host = urlsplit(url).netloc.rsplit("@", 1)[-1]
        sys.exit(f"PostgreSQL at {host} is not reachable ({exc}); this bench needs PostgreSQL.")


def prepare_data(*, env: dict[str, str], clients: int) -> dict[str, str]:
    """Demo data through ``manage.py demo``, then the bench reviewers; returns ``{username: password}``."""
    started = time.perf_counter()
    demo = subprocess.run(
        [PYTHON, "manage.py", "demo", "--no-serve", "--quiet"], cwd=BASE_DIR, env=env, capture_output=True, text=True
    )
    if demo.returncode != 0:
        sys.exit(f"manage.py demo --no-serve failed:\n{demo.stdout}{demo.stderr}")
    print(f"demo data ready ({time.perf_counter() - started:.0f} s)")

    os.environ.update(env)
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group

    from annotations import services
    from annotations.models import Assignment, TurnState
    from scenarios.models import Session, Turn

    users = get_user_model().objects
    group, _ = Group.objects.get_or_create(name="reviewer")
    passwords, reviewers = {}, []
    hashed = None
    password = secrets.token_urlsafe(12)
    for i in range(1, clients + 1):
        username = f"bench_reviewer_{i:02d}"
        user, _ = users.get_or_create(username=username)
        hashed = hashed or make_password(password)  # one hash: 20 PBKDF2 rounds would dominate set-up
        user.password = hashed
        user.save(update_fields=["password"])
        user.groups.add(group)
        passwords[username] = password
        reviewers.append(user)
    bench_users = users.filter(username__startswith="bench_reviewer_")
    # Sessions with turns still open for review (the demo finalises part of its set).
    open_turns = Turn.objects.filter(status__in=[TurnState.DRAFT, TurnState.IN_REVIEW])
    sessions = list(Session.objects.filter(pk__in=open_turns.values("session_id")).order_by("record_id"))
    if len(sessions) * 2 < clients:
        sys.exit(f"only {len(sessions)} sessions have turns open for review: too few for {clients} clients")
    # Two bench reviewers per session on top of whoever the demo assigned.
    for session in sessions:
        others = session.assignments.exclude(reviewer__in=bench_users).count()
        services.distribute(sessions=[session], reviewers=reviewers, per_session=others + 2)
    per_user = Assignment.objects.filter(reviewer__in=bench_users).count() / clients
    print(f"{clients} bench reviewers, {len(sessions)} sessions, {per_user:.1f} sessions per reviewer")
    settle_database()
    return passwords


def settle_database() -> None:
    """VACUUM ANALYZE and CHECKPOINT after the bulk load: otherwise autovacuum and the checkpoint the
    load's WAL triggers run during the measured seconds, and commits wait on their disk writes (draft
    saves and comments of 0.3-1 s while reads stay fast). The bench measures review traffic on a
    settled database, as a server sees it hours after an import."""
    from django.db import DatabaseError, connection

    started = time.perf_counter()
    done = ["VACUUM ANALYZE"]
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        try:
            cursor.execute("CHECKPOINT")  # a superuser or pg_checkpoint member (the default postgres role is)
            done.append("CHECKPOINT")
        except DatabaseError as exc:
            print(f"CHECKPOINT refused ({str(exc).strip()}): the figures may include the load's checkpoint")
    connection.close()
    print(f"database settled: {', '.join(done)} ({time.perf_counter() - started:.1f} s)")


# --- server ---------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BENCH_REDIS_URL = "redis://127.0.0.1:6379/14"


def flush_bench_redis() -> str:
    """Empty the bench's Redis database (the measured run starts cold) and return its URL; exit when
    Redis cannot be reached."""
    import redis

    try:
        redis.Redis.from_url(BENCH_REDIS_URL, socket_timeout=3).flushdb()
    except redis.RedisError as exc:
        sys.exit(f"Redis at {BENCH_REDIS_URL} cannot be used ({exc}): start it, or run with --cache locmem")
    return BENCH_REDIS_URL


def start_server(*, env: dict[str, str], port: int, workers: int, threads: int, clients: int) -> subprocess.Popen:
    gunicorn = Path(PYTHON).with_name("gunicorn")
    if not gunicorn.exists():
        sys.exit(f"{gunicorn} not found: install the requirements (pip install -r requirements.txt)")
    # Persistent connections, as a production server would run: no new PostgreSQL connection per request.
    server_env = {**env, "DATABASE_URL": env["DATABASE_URL"] + "?conn_max_age=600", "DEBUG": "false"}
    # Every client logs in from 127.0.0.1 at the same moment: more than the per-IP login limit (5) would
    # be refused with 429 before the successes give their attempts back. The bench measures review
    # traffic, not the throttle (tests/physreview/test_login_throttle.py covers that).
    server_env["LOGIN_FAILURE_LIMIT"] = str(max(5, 2 * clients))
    log = open(Path(env["PHYSREVIEW_VAR_DIR"]) / "gunicorn.log", "w")  # noqa: SIM115 (closed with the process)
    proc = subprocess.Popen(
        [
            str(gunicorn),
            "physreview.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            "gthread",
            "--threads",
            str(threads),
            "--keep-alive",
            "30",
        ],
        cwd=BASE_DIR,
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"gunicorn exited with {proc.returncode}:\n{Path(log.name).read_text()[-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                conn.close()
                return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    sys.exit("gunicorn did not answer within 60 s")


# --- clients --------------------------------------------------------------------------------------


@dataclass
class Sample:
    endpoint: str
    server_ms: float | None
    cpu_ms: float | None
    rtt_ms: float
    error: str | None


class FormFields(HTMLParser):
    """The fields a browser would send for one form: inputs, textareas, selects (first/selected option)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fields: list[tuple[str, str]] = []
        self.buttons: list[tuple[str, str]] = []
        self.textareas: set[str] = set()
        self._textarea: str | None = None
        self._text: list[str] = []
        self._select: str | None = None
        self._select_value: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        name = a.get("name")
        if tag == "input" and name and a.get("type", "text") not in ("submit", "button", "checkbox", "radio"):
            self.fields.append((name, a.get("value", "")))
        elif tag == "input" and name and a.get("type") in ("checkbox", "radio") and "checked" in a:
            self.fields.append((name, a.get("value", "on")))
        elif tag == "button" and name and a.get("type", "submit") == "submit":
            self.buttons.append((name, a.get("value", "")))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []
        elif tag == "select" and name:
            self._select, self._select_value = name, None
        elif tag == "option" and self._select and (self._select_value is None or "selected" in a):
            self._select_value = a.get("value", "")

    def handle_data(self, data):
        if self._textarea is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "textarea" and self._textarea is not None:
            self.fields.append((self._textarea, "".join(self._text).removeprefix("\n")))
            self.textareas.add(self._textarea)
            self._textarea = None
        elif tag == "select" and self._select is not None:
            self.fields.append((self._select, self._select_value or ""))
            self._select = None


class TimeUp(Exception):
    """The measured window closed: the client stops before its next request."""


@dataclass
class Client:
    port: int
    username: str
    password: str
    rng: random.Random
    samples: list[Sample] = field(default_factory=list)
    cookies: dict[str, str] = field(default_factory=dict)
    counting: bool = False
    stop_at: float = float("inf")
    think: float = 0.0
    conn: http.client.HTTPConnection | None = None

    # one request, kept as a sample when the measured window is on
    def request(
        self, endpoint: str, method: str, path: str, *, form: list[tuple[str, str]] | None = None, csrf: str = ""
    ) -> tuple[int, dict[str, str], str]:
        if time.monotonic() >= self.stop_at:
            raise TimeUp
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Referer"] = f"http://127.0.0.1:{self.port}{path}"
        if csrf:  # what htmx sends (hx-headers on <body>), with HX-Request like a browser swap
            headers.update({"X-CSRFToken": csrf, "HX-Request": "true"})
        start = time.perf_counter()
        status, response_headers, text = self._send(method, path, body, headers)
        rtt = (time.perf_counter() - start) * 1000
        for value in response_headers.get("set-cookie", []):
            for name, morsel in SimpleCookie(value).items():
                self.cookies[name] = morsel.value
        header = ",".join(response_headers.get("server-timing", []))
        timing, cpu = SERVER_TIMING.search(header), SERVER_CPU.search(header)
        error = None if 200 <= status < 400 else f"HTTP {status}"
        if error is None and ERROR_BANNER in text:
            error = "error banner: " + re.sub(r"<[^>]+>", "", text.split(ERROR_BANNER, 1)[1].split("</", 1)[0])[:120]
        if error is None and form is not None and OK_BANNER not in text:
            error = "no confirmation banner after a save"
        if self.counting:
            server_ms = float(timing.group(1)) if timing else None
            self.samples.append(Sample(endpoint, server_ms, float(cpu.group(1)) if cpu else None, rtt, error))
        if self.think:  # a reviewer reads the page before the next click
            time.sleep(self.rng.expovariate(1 / self.think))
        single = {k: v[-1] for k, v in response_headers.items()}
        return status, single, text

    def _send(self, method, path, body, headers):
        for attempt in (1, 2):  # a keep-alive connection the server closed is reopened once
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                text = response.read().decode("utf-8", "replace")
                merged: dict[str, list[str]] = defaultdict(list)
                for k, v in response.getheaders():
                    merged[k.lower()].append(v)
                return response.status, merged, text
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def login(self) -> None:
        _, _, page = self.request("login", "GET", "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if token is None:
            raise RuntimeError("login page has no CSRF token")
        form = [("csrfmiddlewaretoken", token.group(1)), ("username", self.username), ("password", self.password)]
        status, _, _ = self.request("login", "POST", "/accounts/login/", form=form)  # not counted
        if status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"{self.username}: login failed (HTTP {status})")

    def cycle(self, n: int) -> None:
        _, _, queue = self.request("queue", "GET", "/review/")
        turns = [m.group(1) for m in TURN_LINK.finditer(queue)]
        if not turns:
            self._fail("queue", "empty review queue")
            return
        path = self.rng.choice(turns)
        _, _, page = self.request("turn", "GET", path)
        csrf_match = CSRF_HEADER.search(page)
        csrf = (csrf_match.group(1) or csrf_match.group(2)) if csrf_match else self.cookies.get("csrftoken", "")
        self._save_draft(path, page, csrf)
        self.request("comment", "POST", f"{path}comment/", form=[("text", f"bench comment {n}")], csrf=csrf)
        next_link = NEXT_LINK.search(page)
        if next_link:  # the last turn of the reviewer's last session has none
            self.request("next turn", "GET", next_link.group(1))
        self.request("history", "GET", path.replace("/turns/", "/history/"))
        self.request("dashboard", "GET", "/review/dashboard/")

    def _save_draft(self, path: str, page: str, csrf: str) -> None:
        form_html = EDIT_FORM.search(page)
        if form_html is None:
            self._fail("edit (draft)", f"no edit form on {path}")
            return
        parser = FormFields()
        parser.feed(form_html.group(0))
        fields = parser.fields
        if not any(name == "base_version" for name, _ in fields):
            self._fail("edit (draft)", "edit form has no base_version")
            return
        texts = [
            i
            for i, (name, _) in enumerate(fields)
            if name in parser.textareas and name.endswith("_en") and "rubric" not in name
        ]
        if texts:  # toggle a marker on one English text (a typed edit; drafts stay the same size)
            i = self.rng.choice(texts)
            name, value = fields[i]
            fields[i] = (name, value[: -len(EDIT_MARK)] if value.endswith(EDIT_MARK) else value + EDIT_MARK)
        draft = [b for b in parser.buttons if "draft" in b[0] or "draft" in b[1]] or parser.buttons[:1]
        self.request("edit (draft)", "POST", f"{path}edit/", form=fields + draft, csrf=csrf)

    def _fail(self, endpoint: str, message: str) -> None:
        if self.counting:
            self.samples.append(Sample(endpoint, None, None, 0.0, message))
        time.sleep(0.1)


def run_clients(
    *, port: int, passwords: dict[str, str], seconds: float, warmup: float, think: float
) -> tuple[list[Client], float]:
    clients = [
        Client(port=port, username=u, password=p, rng=random.Random(i)) for i, (u, p) in enumerate(passwords.items())
    ]
    for client in clients:
        client.login()
        client.think = think
    start = time.monotonic()
    measure_from, stop_at = start + warmup, start + warmup + seconds
    crashes: list[str] = []

    def loop(client: Client) -> None:
        n, client.stop_at = 0, stop_at
        try:
            while (now := time.monotonic()) < stop_at:
                client.counting = now >= measure_from
                client.cycle(n)
                n += 1
        except TimeUp:
            pass
        except Exception as exc:  # a crashed client is an error, not a silent gap in the figures
            crashes.append(f"{client.username}: {exc!r}")

    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = min(time.monotonic(), stop_at) - measure_from
    for message in crashes:
        clients[0].samples.append(Sample("client crash", None, None, 0.0, message))
    return clients, elapsed


# --- report ---------------------------------------------------------------------------------------


def pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def report(samples: list[Sample], elapsed: float, *, args: argparse.Namespace, client_cpu_share: float) -> int:
    by_endpoint: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        by_endpoint[s.endpoint].append(s)
    print(
        f"\n{args.clients} clients, think time {args.think:g} s, {elapsed:.1f} s measured after "
        f"{args.warmup:g} s warm-up; gunicorn {args.workers} workers x {args.threads} threads; "
        f"PostgreSQL database {BENCH_DB}; fragment cache {args.cache}"
    )
    print(f"{'':30}{'server time (ms)':^24}  {'server CPU (ms)':^16}  {'round trip (ms)':^27}")
    columns = ("p50", 8), ("p95", 8), ("max", 8), ("", 2), ("p50", 8), ("p95", 8), ("", 2), ("p50", 9), ("p95", 9)
    print(f"{'endpoint':14}{'requests':>9}{'errors':>7}  " + "".join(f"{c:>{w}}" for c, w in columns) + f"{'max':>9}")
    names = [e for e in ENDPOINTS if e in by_endpoint] + sorted(set(by_endpoint) - set(ENDPOINTS))
    for name, rows in [(n, by_endpoint[n]) for n in names] + [("all", samples)]:
        server = [s.server_ms for s in rows if s.server_ms is not None]
        cpu = [s.cpu_ms for s in rows if s.cpu_ms is not None]
        rtt = [s.rtt_ms for s in rows if s.rtt_ms]
        errors = sum(1 for s in rows if s.error)
        print(
            f"{name:14}{len(rows):9d}{errors:7d}  "
            f"{pct(server, 50):8.1f}{pct(server, 95):8.1f}{max(server, default=float('nan')):8.1f}  "
            f"{pct(cpu, 50):8.1f}{pct(cpu, 95):8.1f}  "
            f"{pct(rtt, 50):9.1f}{pct(rtt, 95):9.1f}{max(rtt, default=float('nan')):9.1f}"
        )
    errors = [s for s in samples if s.error]
    server = [s.server_ms for s in samples if s.server_ms is not None]
    missing = sum(1 for s in samples if s.server_ms is None and not s.error)
    print(f"throughput: {len(samples) / elapsed:.1f} requests/s")
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"machine: {os.cpu_count()} cores, load average {load} (1/5/15 min) at the end, bench client included "
        f"(it used {client_cpu_share:.0%} of one core)"
    )
    if missing:
        print(f"responses without a Server-Timing header: {missing}")
    p95 = pct(server, 95)
    cpu_p95 = pct([s.cpu_ms for s in samples if s.cpu_ms is not None], 95)
    print(
        f"target server p95 ≤ {TARGET_P95_MS:g} ms: {'MET' if p95 <= TARGET_P95_MS else 'MISSED'} ({p95:.1f} ms; "
        f"server CPU p95 {cpu_p95:.1f} ms)"
    )
    print(f"errors: {len(errors)}")
    for message, n in sorted(
        (
            (m, sum(1 for s in errors if f"{s.endpoint}: {s.error}" == m))
            for m in {f"{s.endpoint}: {s.error}" for s in errors}
        ),
        key=lambda kv: -kv[1],
    )[:10]:
        print(f"  {n} x {message}")
    return 1 if errors or not samples else 0


def main() -> None:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0, help="measured time")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of load before measuring")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean pause after each response, seconds (exponential; 0 = no pause: a closed-loop stress test)",
    )
    parser.add_argument("--workers", type=int, default=2 * cores + 1, help="gunicorn workers (default 2 x cores + 1)")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument(
        "--cache",
        choices=("redis", "locmem"),
        default="redis",
        help="fragment cache: one Redis cache shared by the workers (default) or one in-process cache per worker",
    )
    args = parser.parse_args()
    for name in ("clients", "workers", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.seconds <= 0 or args.warmup < 0 or args.think < 0:
        parser.error("--seconds must be > 0, --warmup and --think ≥ 0")

    url = bench_database_url()
    create_database(url)
    var_dir = tempfile.mkdtemp(prefix="physreview_bench_review_")
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env.update(DATABASE_URL=url, PHYSREVIEW_VAR_DIR=var_dir, DJANGO_SETTINGS_MODULE="physreview.settings")
    env.pop("THROTTLE_CACHE_URL", None)
    env["CACHE_URL"] = flush_bench_redis() if args.cache == "redis" else "locmem://physreview"
    server = None
    try:
        passwords = prepare_data(env=env, clients=args.clients)
        if args.cache == "redis":
            flush_bench_redis()  # drop what the demo preparation cached
        port = free_port()
        server = start_server(env=env, port=port, workers=args.workers, threads=args.threads, clients=args.clients)
        print(f"gunicorn on 127.0.0.1:{port}; {args.clients} clients for {args.seconds:g} s ...", flush=True)
        client_cpu = time.process_time()
        clients, elapsed = run_clients(
            port=port, passwords=passwords, seconds=args.seconds, warmup=args.warmup, think=args.think
        )
        client_cpu_share = (time.process_time() - client_cpu) / (elapsed + args.warmup)
        samples = [s for c in clients for s in c.samples]
        if any(s.error and s.error.startswith("HTTP 5") for s in samples):
            log = (Path(var_dir) / "gunicorn.log").read_text(errors="replace")
            print(f"server errors; end of the gunicorn log:\n{log[-4000:]}")
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(var_dir, ignore_errors=True)
    sys.exit(report(samples, elapsed, args=args, client_cpu_share=client_cpu_share))


if __name__ == "__main__":
    main()
