"""Per-role LLM configuration, read from environment variables.

A role (``generator``, ``patient``, ``translator``, ``judge``, or any name such as
``model_under_test``) is configured by ``LLM_<ROLE>_<SETTING>``, falling back to ``LLM_<SETTING>``
(one place to switch every role), then to a default:

==================  ===========================================  =======================
setting             meaning                                      default
==================  ===========================================  =======================
BACKEND             ``rules`` (offline, deterministic) | openai  ``rules``
BASE_URL            OpenAI-compatible endpoint (http/https)      ``OPENAI_BASE_URL``, else OpenAI
API_KEY_ENV         *name* of the variable holding the key       ``OPENAI_API_KEY``
MODEL               model name (required for ``openai``)         —
TEMPERATURE         0–2; unset = the server's default            unset
TIMEOUT             seconds per HTTP attempt                     60
MAX_CONCURRENCY     requests in flight per client                4
MAX_RETRIES         retries after the first attempt              5
CACHE               reuse stored responses (true/false)          true
MAX_TOKENS          output budget per call; ``none`` or 0 = no   per role, see below
                    limit sent (the server's own default)
MAX_TOKENS_FIELD    ``max_tokens`` | ``max_completion_tokens``   ``max_tokens``
                    (OpenAI reasoning models want the latter)
==================  ===========================================  =======================

Output budget and timeout per role (``LLM_<ROLE>_MAX_TOKENS``, ``LLM_<ROLE>_TIMEOUT``): a model that
rambles stops at its budget (``finish_reason="length"``, counted by runeval) instead of generating until
the timeout, and every retry of a timed-out call would ramble again. A call that needs longer than
TIMEOUT is retried MAX_RETRIES times, so the worst case per call is about (MAX_RETRIES + 1) × TIMEOUT.

====================  ==========  =========================================================
role                  MAX_TOKENS  what one call produces
====================  ==========  =========================================================
``model_under_test``  4096        one step of the evaluated assistant (tool calls or answer)
``judge``             2048        rubric verdicts as JSON
``generator``         4096        a session plan / gold answer as JSON
``translator``        4096        a translated turn
``patient``           1024        one patient reply
any other role        2048
====================  ==========  =========================================================

TIMEOUT is 60 s for every role: enough for a hosted API or a GPU server at these budgets. A CPU-only
local server (llama.cpp, Ollama) produces perhaps 5–20 tokens/s, so give it
``LLM_MODEL_UNDER_TEST_TIMEOUT=300`` (and ``LLM_JUDGE_TIMEOUT``) or a smaller budget.

The configuration holds the *name* of the key variable, never the key: the key is read only when
a client is built (:func:`core.llm.client.get_client`).
"""

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from core.llm.errors import LLMConfigError

Backend = Literal["rules", "openai"]
BACKENDS: tuple[str, ...] = ("rules", "openai")
KNOWN_ROLES: tuple[str, ...] = ("generator", "patient", "translator", "judge")
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_TOKENS_FIELDS: tuple[str, ...] = ("max_tokens", "max_completion_tokens")
# Output budget per role (tokens); see the module docstring.
ROLE_MAX_TOKENS: dict[str, int] = {
    "model_under_test": 4096,
    "judge": 2048,
    "generator": 4096,
    "translator": 4096,
    "patient": 1024,
}
DEFAULT_MAX_TOKENS = 2048
_NO_LIMIT = {"none", "0", "unlimited"}

_ROLE_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True, kw_only=True, repr=False)
class LLMConfig:
    """Everything needed to build a client for one role. Safe to log: it holds no secret."""

    role: str
    backend: Backend
    base_url: str
    api_key_env: str
    model: str | None
    temperature: float | None
    timeout_s: float
    max_concurrency: int
    max_retries: int
    cache: bool
    max_tokens: int | None = None  # None: no limit sent
    max_tokens_field: str = "max_tokens"  # the request field that carries max_tokens

    def __repr__(self) -> str:
        # A base URL may embed user:password; show it without them.
        shown = {f.name: getattr(self, f.name) for f in fields(self)}
        shown["base_url"] = display_url(self.base_url)
        return f"LLMConfig({', '.join(f'{name}={value!r}' for name, value in shown.items())})"

    @property
    def endpoint(self) -> str:
        """Chat-completions URL for messages, without any credentials embedded in the base URL."""
        return f"{display_url(self.base_url).rstrip('/')}/chat/completions"


def display_url(url: str) -> str:
    """``url`` without user:password (a base URL may embed credentials) and without query/fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# --- parsers: each gets the raw text and returns the value or raises ValueError(reason) ------------


def _parse_backend(raw: str) -> str:
    value = raw.strip().lower()
    if value not in BACKENDS:
        raise ValueError(f"expected one of: {', '.join(BACKENDS)}")
    return value


def _parse_url(raw: str) -> str:
    value = raw.strip()
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL with a host")
    return value


def _parse_env_name(raw: str) -> str:
    value = raw.strip()
    if not _ENV_NAME_RE.match(value):
        raise ValueError("expected the name of an environment variable (letters, digits, underscore)")
    return value


def _parse_model(raw: str) -> str | None:
    return raw.strip() or None


def _parse_temperature(raw: str) -> float | None:
    if raw.strip() == "":
        return None
    value = float(raw)
    if not 0.0 <= value <= 2.0:
        raise ValueError("expected a number between 0 and 2")
    return value


def _parse_timeout(raw: str) -> float:
    value = float(raw)
    if not 0.0 < value <= 3600.0:
        raise ValueError("expected a number of seconds greater than 0 and at most 3600")
    return value


def _parse_concurrency(raw: str) -> int:
    value = int(str(raw).strip())
    if value < 1:
        raise ValueError("expected an integer of at least 1")
    return value


def _parse_retries(raw: str) -> int:
    value = int(str(raw).strip())
    if not 0 <= value <= 20:
        raise ValueError("expected an integer between 0 and 20")
    return value


def _parse_max_tokens(raw: str) -> int | None:
    value = str(raw).strip().lower()
    if value in _NO_LIMIT:
        return None
    number = int(value)
    if not 1 <= number <= 1_000_000:
        raise ValueError("expected a number of tokens between 1 and 1000000, or none (no limit)")
    return number


def _parse_max_tokens_field(raw: str) -> str:
    value = raw.strip().lower()
    if value not in MAX_TOKENS_FIELDS:
        raise ValueError(f"expected one of: {', '.join(MAX_TOKENS_FIELDS)}")
    return value


def _parse_bool(raw: str) -> bool:
    value = str(raw).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError("expected a boolean (true, false, 1, 0, yes, no)")


# field name -> (environment suffix, parser, default); the base URL default is resolved at read time.
_FIELDS: dict[str, tuple[str, Callable[[str], Any], Any]] = {
    "backend": ("BACKEND", _parse_backend, "rules"),
    "base_url": ("BASE_URL", _parse_url, None),
    "api_key_env": ("API_KEY_ENV", _parse_env_name, "OPENAI_API_KEY"),
    "model": ("MODEL", _parse_model, None),
    "temperature": ("TEMPERATURE", _parse_temperature, None),
    "timeout_s": ("TIMEOUT", _parse_timeout, 60.0),
    "max_concurrency": ("MAX_CONCURRENCY", _parse_concurrency, 4),
    "max_retries": ("MAX_RETRIES", _parse_retries, 5),
    "cache": ("CACHE", _parse_bool, True),
    "max_tokens": ("MAX_TOKENS", _parse_max_tokens, None),  # None here: the role's default (ROLE_MAX_TOKENS)
    "max_tokens_field": ("MAX_TOKENS_FIELD", _parse_max_tokens_field, "max_tokens"),
}


def env_var_names(*, role: str) -> dict[str, str]:
    """Role-specific environment variable per config field, e.g. ``{"model": "LLM_JUDGE_MODEL", ...}``."""
    prefix = f"LLM_{_check_role(role).upper()}_"
    return {field: prefix + suffix for field, (suffix, _, _) in _FIELDS.items()}


def role_config(*, role: str, environ: Mapping[str, str] | None = None, **overrides: Any) -> LLMConfig:
    """Configuration of ``role`` from the environment; explicit ``overrides`` (not ``None``) win.

    Overrides use the field names of :class:`LLMConfig` (``model=``, ``base_url=``, ``timeout_s=``…),
    so a command such as ``runeval --model X --base-url Y`` builds a ``model_under_test`` role from
    its arguments. Raises :class:`LLMConfigError` naming the variable or argument at fault.
    """
    role = _check_role(role)
    unknown = set(overrides) - set(_FIELDS)
    if unknown:
        raise TypeError(
            f"role_config() got unknown {'setting' if len(unknown) == 1 else 'settings'}: {', '.join(sorted(unknown))}"
        )
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    given: set[str] = set()
    for field, (suffix, parse, default) in _FIELDS.items():
        override = overrides.get(field)
        if override is not None:
            values[field] = _parse_value(parse, str(override), source=f"argument {field}", role=role)
            given.add(field)
            continue
        for name in (f"LLM_{role.upper()}_{suffix}", f"LLM_{suffix}"):
            if name in env:
                values[field] = _parse_value(parse, env[name], source=name, role=role)
                given.add(field)
                break
        else:
            values[field] = default
    if "max_tokens" not in given:  # "none" given explicitly means no limit; not given means the role's budget
        values["max_tokens"] = ROLE_MAX_TOKENS.get(role, DEFAULT_MAX_TOKENS)
    if values["base_url"] is None:
        values["base_url"] = _default_base_url(env)
    config = LLMConfig(role=role, **values)
    if config.backend == "openai" and not config.model:
        raise LLMConfigError(
            f"LLM role {role!r} uses the openai backend but has no model: set LLM_{role.upper()}_MODEL "
            "(or LLM_MODEL, or pass model=)."
        )
    return config


def _check_role(role: str) -> str:
    if not isinstance(role, str) or not _ROLE_RE.match(role):
        raise LLMConfigError(
            f"LLM role {role!r} is not a valid role name (lower-case letters, digits and underscores, e.g. 'judge')."
        )
    return role


def _parse_value(parse: Callable[[str], Any], raw: str, *, source: str, role: str) -> Any:
    try:
        return parse(raw)
    except ValueError as exc:
        # float()/int() give messages like "could not convert string to float"; say what is expected.
        reason = str(exc) if "expected" in str(exc) else "not a valid number"
        raise LLMConfigError(f"{source}={raw!r} is invalid for LLM role {role!r}: {reason}.") from None


def _default_base_url(env: Mapping[str, str]) -> str:
    """``OPENAI_BASE_URL`` from the same environment (settings validated the process one), else OpenAI."""
    raw = env.get("OPENAI_BASE_URL", "")
    if not raw:
        return OPENAI_DEFAULT_BASE_URL
    try:
        return _parse_url(raw)
    except ValueError as exc:
        raise LLMConfigError(f"OPENAI_BASE_URL={raw!r} is invalid: {exc}.") from None
