"""Errors raised by the LLM layer.

Messages name the role, the endpoint and the HTTP status so that a user can act on them; they never
contain an API key (keys are redacted from server messages, and the SDK exception, whose request
carries the ``Authorization`` header, is never chained).
"""

from django.core.exceptions import ImproperlyConfigured


class LLMError(Exception):
    """Base class of every error raised by :mod:`core.llm`."""


class LLMConfigError(LLMError, ImproperlyConfigured):
    """A role's configuration (environment variable or explicit argument) is missing or invalid."""


class RulesBackendError(LLMConfigError):
    """The role uses the deterministic ``rules`` backend, which is not an LLM client."""


class LLMRequestError(LLMError):
    """A call failed: a non-retryable HTTP status, or retries exhausted.

    ``status`` is the last HTTP status (``None`` for timeouts and connection errors), ``attempts``
    the number of HTTP requests made, ``retryable`` whether the last failure was of a retryable kind,
    ``kind`` what the last failure was (``"timeout"``, ``"connection error"``, ``"HTTP 503 Service
    Unavailable"``, ...), for callers that sort failures without reading the message. ``unparseable``:
    the server said it could not parse the request or the model's output (not retried: a caller that
    sends only well-formed history may count it as the model's failure). ``elapsed_s`` / ``backoff_s``:
    time spent on the call in all and asleep between its attempts.
    """

    def __init__(
        self,
        message: str,
        *,
        role: str,
        endpoint: str,
        status: int | None,
        attempts: int,
        retryable: bool,
        kind: str = "",
        unparseable: bool = False,
        elapsed_s: float = 0.0,
        backoff_s: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.unparseable = unparseable
        self.elapsed_s = elapsed_s
        self.backoff_s = backoff_s
        self.role = role
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        self.retryable = retryable


class LLMResponseError(LLMError):
    """The endpoint answered 2xx but the body is not a usable chat completion."""

    def __init__(self, message: str, *, role: str, endpoint: str) -> None:
        super().__init__(message)
        self.role = role
        self.endpoint = endpoint
