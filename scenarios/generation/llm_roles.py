"""The LLM clients of the ``openai`` generation backend, and the check that they can start.

Generation uses three roles (``generator`` writes the English, ``translator`` the Chinese,
``judge`` audits each turn). :class:`LLMRoles` holds one client per role for a run;
:func:`check_llm_setup` is what ``generate --backend openai`` runs before any work, so a missing key
or a wrong base URL is one clear message up front rather than a failure in the middle of a run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.llm import LLMClient, LLMConfig, LLMConfigError, LLMError, LLMRequestError, get_client, role_config
from core.llm.config import display_url
from core.llm.data_use import rule_for, store_origin

ROLES = ("generator", "translator", "judge")


@dataclass(frozen=True, kw_only=True)
class LLMRoles:
    """One client per role used by generation. Build with :meth:`from_env`; close when done."""

    generator: LLMClient
    translator: LLMClient
    judge: LLMClient

    @classmethod
    def from_env(
        cls,
        *,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        origin: str | None = None,
    ) -> LLMRoles:
        """Raises ``LLMConfigError`` (bad config, missing model or key) naming the variable, or its
        ``DataUseRefused`` when a role's endpoint may not receive the EHR store's data (core.llm.data_use).

        The run chose the openai backend, so the roles use it whatever ``LLM_<ROLE>_BACKEND`` says;
        the environment supplies model, base URL, key variable, timeouts. ``origin``: what the records
        are (default: the EHR store's declared origin).
        """
        origin = origin or store_origin()
        clients = {
            role: get_client(
                config=role_config(role=role, environ=environ, backend="openai"),
                environ=environ,
                sleep=sleep,
                data_use=rule_for(role=role, origin=origin, environ=environ),
            )
            for role in ROLES
        }
        return cls(**clients)

    def models(self) -> dict[str, str]:
        return {role: getattr(self, role).config.model or "" for role in ROLES}

    def close(self) -> None:
        for role in ROLES:
            getattr(self, role).close()


class LLMSetupError(Exception):
    """The openai backend cannot start: configuration, API key or endpoint. The message says which."""


def check_llm_setup(
    *, environ: Mapping[str, str] | None = None, probe_timeout_s: float = 10.0, origin: str | None = None
) -> list[str]:
    """Before any work: every role's config is valid, its key variable is set and its endpoint answers.

    Returns one line per probed endpoint. The probe is one tiny uncached chat call per distinct
    (base URL, key variable, model), without retries. Raises :class:`LLMSetupError`; messages name
    the variable or the base URL, never the key.
    """
    env = os.environ if environ is None else environ
    try:
        configs = [role_config(role=role, environ=env, backend="openai") for role in ROLES]
    except LLMConfigError as exc:
        raise LLMSetupError(str(exc)) from None
    origin = origin or store_origin()
    for config in configs:
        try:  # the data-use rule first: a refused endpoint is not even probed
            rule_for(role=config.role, origin=origin, environ=env).check(base_url=config.base_url)
        except LLMConfigError as exc:
            raise LLMSetupError(str(exc)) from None
        if not env.get(config.api_key_env, "").strip():
            raise LLMSetupError(
                f"LLM role {config.role!r} needs an API key in the environment variable {config.api_key_env}, "
                f"which is not set (choose another variable with LLM_{config.role.upper()}_API_KEY_ENV)."
            )
    lines: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for config in configs:
        key = (config.base_url, config.api_key_env, config.model or "")
        if key in seen:
            continue
        seen.add(key)
        lines.append(
            _probe(config=config, environ=env, timeout_s=min(config.timeout_s, probe_timeout_s), origin=origin)
        )
    return lines


def _probe(*, config: LLMConfig, environ: Mapping[str, str], timeout_s: float, origin: str) -> str:
    where = f"LLM endpoint {display_url(config.base_url)} (role {config.role!r}, model {config.model!r})"
    probe = role_config(
        role=config.role, environ=environ, backend="openai", max_retries=0, timeout_s=timeout_s, cache=False
    )
    try:
        with get_client(
            config=probe, environ=environ, data_use=rule_for(role=config.role, origin=origin, environ=environ)
        ) as client:
            client.chat(messages=[{"role": "user", "content": "Reply with the word OK."}], cache=False)
    except LLMRequestError as exc:
        if exc.status is None:
            raise LLMSetupError(
                f"{where} does not answer ({_kind(exc)}); check the base URL and that it runs."
            ) from None
        if exc.status in (401, 403):
            raise LLMSetupError(f"{where} rejected the API key in {config.api_key_env} (HTTP {exc.status}).") from None
        if exc.status == 404:
            raise LLMSetupError(f"{where} answered HTTP 404: check the base URL and the model name.") from None
        # Any other answer (400, 429, 5xx) means the endpoint is there; generation retries as configured.
        return f"{where}: answers (HTTP {exc.status} to the probe)"
    except LLMError as exc:
        raise LLMSetupError(f"{where}: {exc}") from None
    return f"{where}: answers"


def _kind(exc: LLMRequestError) -> str:
    return "timeout" if exc.kind == "timeout" else "connection error"
