"""Evaluation protocols: the conditions a run plays its sessions under.

* ``physreview`` (default): PhysReview's own protocol (replay keyed by arguments, full FHIR JSON
  observations, 16 tool calls per turn, strict cutoff, its own prompts and judge input).
* ``release``: the released PhysAssistBench runner, end to end (:mod:`.release`), to check a number
  against the paper: each session's stored tool schemas, compact text observations (:mod:`.compact`),
  8 model steps, temperature 0.2 and 1,024 output tokens unless given, patient replay by tool name
  and call order with a literacy variant, the release's cutoff bounds and judge inputs.

:func:`settings` resolves what a run records as ``manifest["protocol"]``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PROTOCOLS = ("physreview", "release")
LITERACIES = ("low", "medium", "high")
DEFAULT_PROTOCOL = "physreview"
RELEASE_MAX_STEPS = 8
RELEASE_TEMPERATURE = 0.2
RELEASE_MAX_TOKENS = 1024
RELEASE_LITERACY = "high"
PHYSREVIEW_MAX_STEPS = 16


class ProtocolError(ValueError):
    """Options that contradict the chosen protocol."""


@dataclass(frozen=True)
class ProtocolSettings:
    name: str
    literacy: str | None
    bounds: str  # ehr.fhir.context BOUNDS
    max_steps: int  # physreview: tool calls per turn; release: model steps per turn
    temperature: float | None
    max_tokens: int | None
    observations: str  # "json" | "compact"
    judge_mode: str  # "rules" | "physreview" | "release"
    patient_replay: str  # "arguments" | "order" | "live"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_options(*, protocol: str, literacy: str | None, live_patient: bool) -> None:
    if protocol not in PROTOCOLS:
        raise ProtocolError(f"--protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if literacy is not None and literacy not in LITERACIES:
        raise ProtocolError(f"--literacy {literacy!r}: expected one of {', '.join(LITERACIES)}")
    if protocol == "physreview" and literacy is not None:
        raise ProtocolError(
            "--literacy applies to --protocol release only (PhysReview replays the reviewed answer as stored)"
        )
    if protocol == "release" and live_patient:
        raise ProtocolError(
            "--live-patient contradicts --protocol release: the released runner replays the gold patient "
            "answers by tool name and call order"
        )


def default_max_steps(protocol: str) -> int:
    return RELEASE_MAX_STEPS if protocol == "release" else PHYSREVIEW_MAX_STEPS


def settings(
    *,
    protocol: str,
    literacy: str | None,
    max_steps: int,
    temperature: float | None,
    max_tokens: int | None,
    live_patient: bool,
    judge_kind: str,
) -> ProtocolSettings:
    """``judge_kind``: ``rules`` or ``llm``. The rules judge scores the same way under both protocols."""
    release = protocol == "release"
    judge_mode = "rules" if judge_kind == "rules" else ("release" if release else "physreview")
    replay = "order" if release else ("live" if live_patient else "arguments")
    return ProtocolSettings(
        name=protocol,
        literacy=(literacy or RELEASE_LITERACY) if release else None,
        bounds="release" if release else "strict",
        max_steps=max_steps,
        temperature=temperature,
        max_tokens=max_tokens,
        observations="compact" if release else "json",
        judge_mode=judge_mode,
        patient_replay=replay,
    )
