"""Sending one chat-completion body: the POST, our retries, and what a failure is called.

This is the part of :class:`core.llm.client.LLMClient` that deals with the network and nothing
else: it holds a concurrency slot only while a request is in flight, retries what
:mod:`core.llm.retry` says is worth retrying (honouring ``Retry-After``), and turns the SDK's
exceptions into :class:`LLMRequestError` / :class:`LLMResponseError` messages that name the role,
the endpoint and the server's reason, never the API key (the SDK's exceptions carry the request and
its ``Authorization`` header, so only their type and the server's text are kept, redacted).
"""

from __future__ import annotations

import http
import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from core.llm.config import LLMConfig
from core.llm.errors import LLMRequestError, LLMResponseError
from core.llm.retry import RetryPolicy, is_retryable_failure, says_unparseable

if TYPE_CHECKING:
    import openai

log = logging.getLogger("core.llm")

_SECRET_PATTERNS = (re.compile(r"(?i)bearer\s+\S+"), re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"))
_DETAIL_MAX = 300


@dataclass(frozen=True, kw_only=True)
class Failure:
    """One failed attempt, already stripped of the SDK exception (which carries the key)."""

    status: int | None
    kind: str
    detail: str
    headers: dict[str, str] | None
    retryable: bool


def post_with_retries(
    *,
    sdk: openai.OpenAI,
    slots: threading.BoundedSemaphore,
    config: LLMConfig,
    retry: RetryPolicy,
    sleep: Callable[[float], None],
    rand: Callable[[], float],
    content: bytes,
) -> tuple[dict[str, Any], int, float]:
    """POST the JSON ``content`` with retries; returns the JSON body, the number of attempts and
    the seconds slept between them."""
    import openai  # already loaded by the client that made ``sdk``

    attempt = 0
    backoff = 0.0
    while True:
        attempt += 1
        failure: Failure | None = None
        body: object = None
        try:
            # The slot is held only while a request is in flight, never while backing off.
            with slots:
                # The SDK's transport and error mapping, but not ``chat.completions.create``: its
                # type-driven ``maybe_transform`` walks every message and tool schema of every call
                # (several ms, holding the GIL) and is the identity for the plain JSON we send. The
                # body goes as ready JSON (see core.llm.request: the tools are serialised once).
                response = sdk.post(
                    "/chat/completions",
                    cast_to=httpx2.Response,
                    content=content,
                    options={"timeout": config.timeout_s},
                )
                body = json_or_none(response)
        except openai.APIStatusError as exc:
            detail = redact(_server_detail(exc.body), api_key=sdk.api_key)
            failure = Failure(
                status=exc.status_code,
                kind=_status_text(exc.status_code),
                detail=detail,
                headers=dict(exc.response.headers),
                retryable=is_retryable_failure(status=exc.status_code, detail=detail),
            )
        except openai.APITimeoutError:
            failure = Failure(status=None, kind="timeout", detail="", headers=None, retryable=True)
        except openai.APIConnectionError as exc:
            detail = _os_cause(exc)
            failure = Failure(status=None, kind="connection error", detail=detail, headers=None, retryable=True)
        except openai.OpenAIError as exc:
            # The SDK's exceptions carry the request (and its Authorization header): keep the type only.
            kind = f"SDK error {type(exc).__name__}"
            failure = Failure(status=None, kind=kind, detail="", headers=None, retryable=False)
        # Raised outside the except blocks so the SDK exception is not even the implicit context.
        if failure is None:
            if not isinstance(body, dict):
                raise LLMResponseError(
                    f"LLM role {config.role!r}: {config.endpoint} answered with a body that is not a JSON object.",
                    role=config.role,
                    endpoint=config.endpoint,
                )
            return body, attempt, backoff
        if not failure.retryable or attempt > retry.max_retries:
            error = request_error(config=config, retry=retry, failure=failure, attempts=attempt)
            error.backoff_s = backoff
            raise error
        delay = retry.delay_s(retry_number=attempt, headers=failure.headers, rand=rand)
        log.warning(
            "LLM role %s: %s from %s; retry %d of %d in %.2f s",
            config.role,
            failure.kind,
            config.endpoint,
            attempt,
            retry.max_retries,
            delay,
        )
        sleep(delay)
        backoff += delay


def request_error(*, config: LLMConfig, retry: RetryPolicy, failure: Failure, attempts: int) -> LLMRequestError:
    """The error raised when an attempt failed for good: what happened and why it was (not) retried."""
    c = config
    what = failure.kind + (f": {failure.detail}" if failure.detail else "")
    unparseable = failure.status is not None and says_unparseable(failure.detail)
    if failure.retryable:
        tail = (
            f"gave up after {attempts} {'attempt' if attempts == 1 else 'attempts'} "
            f"(LLM_{c.role.upper()}_MAX_RETRIES={retry.max_retries})"
        )
    elif unparseable:
        tail = "not retried (the server could not parse the request or the model's output: it would fail again)"
    else:
        tail = "not retried"
    return LLMRequestError(
        f"LLM role {c.role!r} (model {c.model!r}): request to {c.endpoint} failed with {what}; {tail}.",
        role=c.role,
        endpoint=c.endpoint,
        status=failure.status,
        attempts=attempts,
        retryable=failure.retryable,
        kind=failure.kind,
        unparseable=unparseable,
    )


def redact(text: str, *, api_key: object) -> str:
    """``text`` without the client's key or anything that looks like a bearer token or an OpenAI key."""
    if isinstance(api_key, str) and api_key:
        text = text.replace(api_key, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("[redacted]", text)
    return text


def json_or_none(response: httpx2.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return None


def _os_cause(exc: BaseException) -> str:
    """The operating system's reason under a connection error ("Connection refused"), if any.

    Only ``strerror`` is kept: the exception chain also carries the request, with its key.
    """
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return ""


def _status_text(status: int) -> str:
    try:
        return f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def _server_detail(body: object) -> str:
    """The server's error message, shortened; the SDK passes the ``error`` object or the raw text."""
    if isinstance(body, dict):
        message = body.get("message")
        text = message if isinstance(message, str) else json.dumps(body, ensure_ascii=False)
    elif body is None:
        text = ""
    else:
        text = str(body)
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"
