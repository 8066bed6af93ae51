"""Content-Security-Policy (physreview.middleware): on every response, a fresh nonce per request, and
templates without inline code the policy would block (tests/e2e/test_csp.py runs pages in Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.annotations.conftest import make_user

TEMPLATE_DIRS = [Path(settings.BASE_DIR) / "templates"]
NONCE = re.compile(r"'nonce-([A-Za-z0-9_-]+)'")


def _nonce(response) -> str:
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "object-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    return NONCE.search(policy).group(1)


@pytest.mark.django_db
def test_every_response_has_the_policy_with_a_fresh_nonce(client):
    first, second = client.get("/accounts/login/"), client.get("/accounts/login/")
    assert _nonce(first) != _nonce(second)
    assert "Content-Security-Policy" in client.get("/api/runs/")  # API errors too
    assert "Content-Security-Policy" in client.get("/no-such-page/")


@pytest.mark.django_db
def test_api_docs_inline_script_and_style_carry_the_nonce(client):
    response = client.get("/api/docs/")
    nonce = _nonce(response)
    html = response.content.decode()
    inline = re.findall(r"<(script|style)(?![^>]*\bsrc=)([^>]*)>", html)
    assert inline and all(f'nonce="{nonce}"' in attrs for _tag, attrs in inline)


@pytest.mark.django_db
def test_pages_have_no_inline_style_or_handler(client, demo_cohort):
    client.force_login(make_user("csp_rev", "reviewer"))
    for url in ("/ehr/patients/", "/review/", "/review/dashboard/", "/results/", "/results/calibration/"):
        html = client.get(url).content.decode()
        assert not re.search(r"\sstyle=|\son[a-z]+=", html), url


def _templates():
    for root in TEMPLATE_DIRS:
        yield from root.rglob("*.html")


def test_templates_have_no_code_the_policy_blocks():
    problems = []
    for path in _templates():
        text = path.read_text()
        for match in re.finditer(r"<(script|style)\b([^>]*)>", text):
            if "src=" not in match.group(2) and "csp_nonce" not in match.group(2):
                problems.append(f"{path}: inline <{match.group(1)}> without the nonce")
        if re.search(r"\sstyle=\"|\son[a-z]+=\"|javascript:", text):
            problems.append(f"{path}: style attribute, event handler attribute or javascript: URL")
    assert not problems, "\n".join(problems)
