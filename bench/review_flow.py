"""Bench: the review flow in Chromium, as a reviewer works through the demo queue (issue 35).

    .venv/bin/python bench/review_flow.py [--turns 20] [--keep]

1. Prepares the demo in a temporary ``PHYSREVIEW_VAR_DIR`` (``manage.py demo --no-serve``, SQLite unless
   ``DATABASE_URL`` is set) and serves it with ``manage.py runserver --noreload`` on a free 127.0.0.1 port
   (started as its own process, so it is the server that is stopped at the end).
2. In Debian's Chromium (Playwright), logs in as ``demo_reviewer`` (password from the demo's credentials file) and
   measures, over ``--turns`` turns of its queue:
   - *screen load*: ``page.goto`` of a review screen until its ``load`` event (scripts run, keys live);
   - *`a` → next*: the `a` key on a loaded screen until the next pending turn's ``load`` event (the approval is
     submitted, the server answers with the next turn, the browser loads it);
   - *baseline*, in the same run and browser: ``page.goto`` of the login page (a small page of the same server,
     no database reads) until ``load``; every figure is also printed as a ratio to its median.
3. Counts keys and Tab stops for each decision, by pressing them in the browser:
   - approve: `a` (1 key); reject: `r`, a number, Enter (3 keys);
   - Tab stops from the top of the page to Approve, with the skip link (Tab, Enter, Tab) and without it (Tabs
     only, the skip link counted as one stop);
   - edit: `e` opens the editor with the caret in its first field; from the answer field, Ctrl+Enter saves
     (1 key) — and the Tab stops to the *Save draft* button are counted for comparison.
Prints median and max per measure, and the counts. Exits non-zero if a step did not do what it should.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SERVER_TIME = re.compile(r"app;dur=([0-9.]+)")  # physreview.middleware: time inside Django


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)  # noqa: S310 - 127.0.0.1 only
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"server at {url} did not come up in {timeout:.0f} s")


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _summary(name: str, values: list[float], baseline: float) -> str:
    med, top = statistics.median(values), max(values)
    return f"{name:<22} median {med:7.1f} ms  max {top:7.1f} ms  ({med / baseline:4.1f}× baseline, n={len(values)})"


def _tabs_until(page, element_id: str, limit: int = 200) -> int:
    for n in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return n
    raise SystemExit(f"#{element_id} not reached in {limit} Tab presses")


def measure(base_url: str, password: str, turns: int) -> int:
    from playwright.sync_api import sync_playwright

    failures = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{base_url}/accounts/login/")
        page.fill("input[name=username]", "demo_reviewer")
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_load_state()

        baseline = []
        for _ in range(turns):
            context = browser.new_context()  # logged out: the login page itself, not a redirect
            blank = context.new_page()
            start = time.perf_counter()
            blank.goto(f"{base_url}/accounts/login/", wait_until="load")
            baseline.append(_ms(time.perf_counter() - start))
            context.close()
        base = statistics.median(baseline)

        page.goto(f"{base_url}/review/")
        links = page.eval_on_selector_all("#review-queue tbody a[href*='/review/turns/']", "a => a.map(x => x.href)")
        if len(links) < turns + 1:
            raise SystemExit(f"the demo queue has {len(links)} turns; --turns {turns} needs {turns + 1}")
        loads, server = [], []
        for url in links[:turns]:
            start = time.perf_counter()
            response = page.goto(url, wait_until="load")
            loads.append(_ms(time.perf_counter() - start))
            timing = SERVER_TIME.search(response.headers.get("server-timing", "")) if response else None
            if timing:
                server.append(float(timing.group(1)))

        advances = []
        page.goto(links[0], wait_until="load")
        for _ in range(turns):
            before = page.url
            start = time.perf_counter()
            with page.expect_navigation(wait_until="load"):
                page.keyboard.press("a")
            advances.append(_ms(time.perf_counter() - start))
            if page.url == before or page.locator("#submitted-confirmation").count() != 1:
                failures += 1
                print(f"FAILED: `a` on {before} did not confirm and move on (now {page.url})")
            if "/review/turns/" not in page.url:
                break  # the queue ran out

        # Keys and Tab stops on a fresh pending turn.
        page.goto(f"{base_url}/review/")
        page.click("#review-queue tbody a[href*='/review/turns/']")
        page.wait_for_load_state("load")
        tabs_plain = _tabs_until(page, "approve-btn")
        page.reload(wait_until="load")
        page.keyboard.press("Tab")
        skip_ok = page.evaluate("document.activeElement.id") == "skip-to-decision"
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        skip_ok = skip_ok and page.evaluate("document.activeElement.id") == "approve-btn"
        if not skip_ok:
            failures += 1
            print("FAILED: the skip link does not lead to Approve in Tab, Enter, Tab")
        page.reload(wait_until="load")
        page.keyboard.press("r")
        page.keyboard.press("1")
        reason_ok = page.input_value("#reject-reason") != ""
        page.keyboard.press("Escape")
        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("e")
        page.wait_for_selector("#edit-panel[open]")
        caret_in_editor = page.evaluate("document.activeElement.closest('#edit-form') !== null")
        page.focus("#field-answer_en")
        tabs_to_save = _tabs_until(page, "save-draft")
        page.focus("#field-answer_en")
        page.keyboard.press("End")
        page.keyboard.type(" (checked)")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("#actions-feedback .banner-ok")
        saved = "Draft saved" in page.inner_text("#actions-feedback")
        if not (reason_ok and caret_in_editor and saved):
            failures += 1
            print(f"FAILED: reason by number {reason_ok}, caret in editor after e {caret_in_editor}, saved {saved}")
        browser.close()

    print(_summary("baseline (login page)", baseline, base))
    print(_summary("review screen load", loads, base))
    if server:
        print(_summary("  of which in Django", server, base))
    print(_summary("`a` → next turn loaded", advances, base))
    print("keys per decision: approve 1 (a) · reject 3 (r, 1–9, Enter) · save an edit 1 (Ctrl+Enter)")
    print(f"Tab stops to Approve: {tabs_plain} without the skip link · 2 with it (Tab, Enter, Tab)")
    print(f"Tab stops from the answer field to Save draft: {tabs_to_save} (Ctrl+Enter: none)")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the temporary var dir")
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    var_dir = Path(tempfile.mkdtemp(prefix="review_flow_"))
    env = {**os.environ, "PHYSREVIEW_VAR_DIR": str(var_dir)}  # served as `make demo` serves it
    server = None
    try:
        print("preparing the demo …", flush=True)
        subprocess.run([PYTHON, "manage.py", "demo", "--no-serve", "--quiet"], cwd=BASE_DIR, env=env, check=True)
        password = json.loads((var_dir / "demo_credentials.json").read_text())["reviewer"]
        port = _free_port()
        server = subprocess.Popen(
            [PYTHON, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base_url = f"http://127.0.0.1:{port}"
        _wait_up(f"{base_url}/accounts/login/")
        failures = measure(base_url, password, args.turns)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        if not args.keep:
            shutil.rmtree(var_dir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
