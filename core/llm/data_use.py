"""Where record-derived text may be sent: the data-use rule of each LLM role.

PhysioNet's responsible-use guidance for credentialed data (MIMIC) with LLMs (2025) forbids sending the data to
a service that keeps it or trains on it, and recommends models run locally. Every prompt this project sends
carries record-derived text (the generator, translator, patient simulator, judge and the model under test all
see the record), so when the data is MIMIC-derived each role may reach only the endpoints its rule allows:

- by default the loopback interface (a model served on this machine: ``127.0.0.0/8``, ``::1``, ``localhost``);
- ``LLM_ALLOWED_ENDPOINTS`` (every role) or ``LLM_<ROLE>_ALLOWED_ENDPOINTS`` (one role, wins) replace that
  default with a comma-separated list of endpoints, e.g. an institution's own gateway or a provider under a
  zero-retention agreement the data use agreement permits. An entry is ``scheme://host[:port][/path]``;
  it covers a base URL with the same scheme, host and port whose path starts with the entry's path.
  Loopback is then allowed only if listed: a local proxy may forward elsewhere.

Synthetic data (``PHYSREVIEW_EHR_PROVENANCE=synthetic`` for the EHR store, and no imported release records)
has no rule. The check runs when a client is built and again before every request, so a refused endpoint
never receives a byte (not even the preflight probe or a TCP connection).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from core.llm.errors import LLMConfigError

MIMIC = "mimic"
SYNTHETIC = "synthetic"
ORIGINS = (MIMIC, SYNTHETIC)
ALL_ROLES_VARIABLE = "LLM_ALLOWED_ENDPOINTS"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class DataUseRefused(LLMConfigError):
    """A role was about to send record-derived text to an endpoint its data-use rule does not allow."""


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        """Raises ``ValueError`` naming what is wrong with ``text``."""
        parts = urlsplit(text.strip())
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ValueError(f"{text!r} is not an http or https URL with a host (e.g. http://127.0.0.1:8080/v1)")
        try:
            port = parts.port or _DEFAULT_PORTS[parts.scheme]
        except ValueError:
            raise ValueError(f"{text!r} has an invalid port") from None
        return cls(scheme=parts.scheme, host=parts.hostname.lower(), port=port, path=parts.path.rstrip("/"))

    def covers(self, other: Endpoint) -> bool:
        same_origin = (self.scheme, self.host, self.port) == (other.scheme, other.host, other.port)
        return same_origin and (other.path + "/").startswith(self.path + "/")

    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False  # a name is not resolved here: one that points at 127.0.0.1 must be listed

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


@dataclass(frozen=True, kw_only=True)
class DataUseRule:
    """The rule one role runs under. ``allowed`` is ``None`` for loopback only (MIMIC's default) and for
    synthetic data (no rule), else the listed endpoints; ``variable`` names where the list came from."""

    role: str
    origin: str
    allowed: tuple[Endpoint, ...] | None
    variable: str = ""

    def describe(self) -> str:
        if self.origin != MIMIC:
            return "synthetic data: no data-use rule"
        if self.allowed is None:
            return "MIMIC-derived data: loopback endpoints only (the default)"
        return f"MIMIC-derived data: only {', '.join(map(str, self.allowed))} ({self.variable})"

    def permits(self, base_url: str) -> bool:
        if self.origin != MIMIC:
            return True
        try:
            target = Endpoint.parse(base_url)
        except ValueError:
            return False
        if self.allowed is None:
            return target.is_loopback()
        return any(entry.covers(target) for entry in self.allowed)

    def check(self, *, base_url: str) -> None:
        """Raises :class:`DataUseRefused` naming the role, the endpoint and the rule."""
        if self.permits(base_url):
            return
        from core.llm.config import display_url  # config imports errors only; keep this module's imports light

        how = (
            f"list the endpoint in LLM_{self.role.upper()}_ALLOWED_ENDPOINTS or {ALL_ROLES_VARIABLE} if your data use "
            "agreement permits sending the data there (no retention, no training), or serve a model locally; "
            "data is MIMIC-derived unless PHYSREVIEW_EHR_PROVENANCE (or the snapshot's --ehr-provenance) declares "
            "it synthetic (a store filled only by synth_ehr) and no session is an imported release record"
        )
        raise DataUseRefused(
            f"data-use rule: role {self.role!r} may not send record-derived text to {display_url(base_url)} "
            f"(rule in force: {self.describe()}); {how}."
        )

    def manifest(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "rule": "none" if self.origin != MIMIC else ("loopback" if self.allowed is None else "allowlist"),
            "allowed": None if self.allowed is None else [str(e) for e in self.allowed],
            "variable": self.variable,
            "description": self.describe(),
        }


def rule_for(*, role: str, origin: str, environ: Mapping[str, str] | None = None) -> DataUseRule:
    """The rule of ``role`` for data of ``origin`` (``mimic`` or ``synthetic``), from the environment.

    Raises :class:`LLMConfigError` for an unknown origin or an allowlist entry that is not a URL."""
    if origin not in ORIGINS:
        raise LLMConfigError(f"data origin {origin!r} is not one of {', '.join(ORIGINS)}")
    if origin != MIMIC:
        return DataUseRule(role=role, origin=origin, allowed=None)
    env = os.environ if environ is None else environ
    for variable in (f"LLM_{role.upper()}_ALLOWED_ENDPOINTS", ALL_ROLES_VARIABLE):
        text = env.get(variable, "").strip()
        if not text:
            continue
        try:
            allowed = tuple(Endpoint.parse(item) for item in text.split(",") if item.strip())
        except ValueError as exc:
            raise LLMConfigError(f"{variable}: {exc}") from None
        return DataUseRule(role=role, origin=origin, allowed=allowed, variable=variable)
    return DataUseRule(role=role, origin=origin, allowed=None)


def store_origin() -> str:
    """What the EHR store holds, as declared by ``PHYSREVIEW_EHR_PROVENANCE`` (settings.EHR_PROVENANCE):
    ``synthetic`` only when declared so; ``mimic`` and ``undeclared`` are MIMIC (as the snapshot card treats them,
    annotations.snapshots.card.mimic_derived)."""
    from django.conf import settings

    return SYNTHETIC if getattr(settings, "EHR_PROVENANCE", "undeclared") == SYNTHETIC else MIMIC
