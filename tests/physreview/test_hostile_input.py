"""Hostile input over every URL pattern and API route: never a server error (5xx).

NUL bytes and lone surrogates in the query string and form fields, over-long strings, JSON nested
5,000 deep or carrying ``\\ud800``, odd methods and content types, sent as admin (who reaches every
view) and as a reviewer, to every URL that tests/test_url_permissions.py walks (the resolver's patterns
with real sample objects). ``tests/annotations/api/test_schemathesis.py`` fuzzes the API schema.
"""

# ruff: noqa: F811 (the world fixture comes from tests/test_url_permissions.py)
from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.test_url_permissions import _cases, world  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

LONG = "x" * 101  # one past varchar(100)
HUGE = "y" * 20_000
FORM_FIELDS = ("text", "name", "label", "answer_en", "reject_reason", "q", "step-0-arguments", "note", "title")
HOSTILE_QUERIES = (
    "q=%00&search=a%00b",
    "version=%00&page=%ED%A0%80",
    f"q={LONG}&name={HUGE}&sort={LONG}&dir=%0D%0Aset-cookie:x",
    "page=-1&page_size=100000000&step=99999999999999999999&a=1&b=%00",
)
FORMS = (
    {name: "a\x00b" for name in FORM_FIELDS} | {"base_version": "1", "chosen": "a"},
    {name: LONG for name in FORM_FIELDS} | {"base_version": "1", "runs": "1", "per_stratum": "1"},
    {name: HUGE for name in FORM_FIELDS} | {"base_version": "99999999999999999999"},
    {"step-0-arguments": '{"code": "\\ud800"}', "answer_en": "\\u0000", "base_version": "1"},
)
JSON_BODIES = (
    "[" * 5000 + "]" * 5000,
    '{"base_version": 1, "changes": {"answer_en": "\\ud800", "steps": [{"arguments": {"code": "\\u0000"}}]}}',
    json.dumps({"base_version": 1, "changes": {"answer_en": HUGE, "subtype": LONG}, "reason": LONG}),
    '{"base_version": 1e999, "changes": []}',
)
ODD = (
    ("put", "application/json", "{}"),
    ("patch", "application/json", "[]"),
    ("delete", "application/json", ""),
    ("options", "", ""),
    ("post", "text/plain", "\x00\x01"),
    ("post", "application/xml", "<a>&xxe;</a>"),
    ("post", "multipart/form-data; boundary=nope", "--nope\r\ngarbage"),
    ("post", "application/x-www-form-urlencoded", "a=%ED%A0%80&b=%00&%00=c"),
)
NO_POST = ("logout", "admin:logout")  # a POST would end the session the rest of the walk needs


def _requests(url: str, label: str, *, full: bool):
    joiner = "&" if "?" in url else "?"
    for query in HOSTILE_QUERIES if full else HOSTILE_QUERIES[:1]:
        yield "get", f"{url}{joiner}{query}", {}
    if label.split(" ")[0] in NO_POST:
        return
    for form in FORMS if full else FORMS[:1]:
        yield "post", url, {"data": form}
    for body in JSON_BODIES if full else JSON_BODIES[:1]:
        yield "post", url, {"data": body, "content_type": "application/json"}
    for method, content_type, body in ODD if full else ODD[:2]:
        yield method, url, {"data": body, "content_type": content_type} if content_type else {}


def test_no_server_error_for_hostile_input(world):
    cases = _cases(world)
    failures: list[str] = []
    sent = 0
    for role in ("admin", "reviewer"):
        client = Client(raise_request_exception=False)
        client.force_login(world["users"][role])
        for url, label, _expected in cases:
            admin_page = url.startswith("/admin/")
            if admin_page and role != "admin":
                continue  # a redirect to the admin login for everyone else
            for method, target, kwargs in _requests(url, label, full=not admin_page):
                response = getattr(client, method)(target, **kwargs)
                sent += 1
                if response.status_code >= 500:
                    failures.append(f"{role} {method.upper()} {target[:120]} ({label}) → {response.status_code}")
    assert sent > 1000
    assert not failures, f"{len(failures)} server errors of {sent} requests:\n" + "\n".join(failures)
