"""One input-cleaning layer for pages and the API: input the app cannot store or use answers 400.

- :class:`InputCleaningMiddleware` checks the path, the query string and form fields (names and values)
  for NUL characters and lone surrogates, raw or JSON-escaped (form fields carry JSON text, e.g. a step's
  arguments), before any view; and turns a database ``DataError`` (a value longer than its column, a
  character the database refuses) into a 400 naming the problem instead of a 500.
- :class:`CleanJSONParser` (the API's parser) does the same for JSON bodies (a validation error on the
  top-level field that holds the bad string) and refuses nesting deeper than :data:`MAX_JSON_DEPTH`.

API paths answer with the API's error body (``{"error": {"code", "message"}}``); pages with 400.html.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from django.db import DataError
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

logger = logging.getLogger(__name__)

MAX_JSON_DEPTH = 32
API_PREFIX = "/api/"
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# JSON escapes that decode to a NUL or to a surrogate without its partner (a valid pair is an emoji).
_BAD_ESCAPE = re.compile(
    r"\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class InvalidInput(ValueError):
    """Input the app refuses; the message names where it was found (``field``: the top-level JSON key)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def text_problem(value: str) -> str:
    """What makes ``value`` unusable ("" when nothing does)."""
    if "\x00" in value:
        return "contains a NUL character"
    if _LONE_SURROGATE.search(value):
        return "contains a lone surrogate (not valid Unicode)"
    if "\\u" in value and _BAD_ESCAPE.search(value):
        return "contains an escaped NUL or lone surrogate (\\u0000, \\ud800...)"
    return ""


def check_texts(pairs: Iterable[tuple[str, str]], *, where: str) -> None:
    """Raise :class:`InvalidInput` for the first (name, value) pair whose name or value is unusable."""
    for name, value in pairs:
        if problem := text_problem(name):
            raise InvalidInput(f"The {where}: a field name {problem}.")
        if problem := text_problem(value):
            raise InvalidInput(f"The {where}: field {name!r} {problem}.")


def _top(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0] if path else ""


def check_json(data: Any) -> None:
    """Depth, NUL and surrogates over a parsed JSON document, without recursion."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise InvalidInput(f"JSON nested deeper than {MAX_JSON_DEPTH} levels (at {path or 'the top'}).")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and (problem := text_problem(key)):
                    raise InvalidInput(f"A JSON key at {path or 'the top'} {problem}.", field=_top(path))
                child = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]"
                stack.append((item, child.lstrip("."), depth + 1))
        elif isinstance(value, str) and (problem := text_problem(value)):
            raise InvalidInput(f"JSON value {path or '(the document)'} {problem}.", field=_top(path))


def _each(query: QueryDict) -> Iterable[tuple[str, str]]:
    """Every (name, value), repeated names included (``items()`` yields only the last value)."""
    return ((name, value) for name, values in query.lists() for value in values)


def check_request(request: HttpRequest) -> None:
    if problem := text_problem(request.path):
        raise InvalidInput(f"The URL path {problem}.")
    check_texts(_each(request.GET), where="query string")
    # API bodies are JSON, checked by CleanJSONParser; reading a form here would hide DRF's 415 for it.
    if request.path.startswith(API_PREFIX):
        return
    if request.method in ("POST", "PUT", "PATCH") and request.content_type in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        check_texts(_each(request.POST), where="form")
        check_texts(((name, f.name or "") for name, f in request.FILES.items()), where="form's files")


def _refuse(request: HttpRequest, message: str, *, code: str = "invalid_input") -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"error": {"code": code, "message": message}}, status=400)
    return render(request, "400.html", {"exception": message}, status=400)


class InputCleaningMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            check_request(request)
        except InvalidInput as exc:
            return _refuse(request, str(exc))
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DataError):
            return None
        # The view's transaction was rolled back; say which rule the input broke, not a 500.
        logger.warning("input refused by the database on %s: %s", request.path, exception)
        reason = str(exception).strip().splitlines()[0] if str(exception).strip() else "invalid value"
        return _refuse(request, f"The input could not be stored: {reason}.", code="invalid_input")


class CleanJSONParser(JSONParser):
    """DRF's JSON parser plus :func:`check_json` (a 400 ``parse_error`` naming the problem)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels.") from None
        try:
            check_json(data)
        except InvalidInput as exc:
            if exc.field:  # named like any other invalid field: error.fields[<key>]
                raise ValidationError({exc.field: [str(exc)]}) from None
            raise ParseError(str(exc)) from None
        return data
