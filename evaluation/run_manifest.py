"""What a run is asked to do and what it records about itself.

:class:`RunOptions` are the choices of one ``runeval`` (languages, variants, trials, protocol,
budgets); the manifest stored on the :class:`~evaluation.models.EvalRun` writes them down with
everything else a result depends on (dataset, tool schemas, judge, protocol settings, code
version), so two runs can be compared or a run reproduced from its manifest alone.
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import django

from core.version import code_version
from ehr.fhir import schema_hash
from evaluation.agent import DEFAULT_MAX_STEPS
from evaluation.agents.base import Agent
from evaluation.dataset import EvalDataset
from evaluation.protocols import DEFAULT_PROTOCOL
from evaluation.protocols import settings as protocol_settings
from evaluation.protocols.release import PROMPT_HASH as RELEASE_PROMPT_HASH
from evaluation.protocols.release import release_tools

Progress = Callable[[int], None]


@dataclass(frozen=True)
class RunOptions:
    languages: tuple[str, ...] = ("en",)
    variants: tuple[str, ...] = ("implicit",)
    trials: int = 1
    max_steps: int = DEFAULT_MAX_STEPS
    concurrency: int = 1
    temperature: float | None = None
    reasoning_effort: str | None = None
    limit: int | None = None
    live_patient: bool = False  # patient tools answered by the record-grounded rules patient, not replay
    processes: int = 1  # local worker processes the run started with (how it ran; scores do not depend on it)
    # runeval --protocol: physreview (PhysReview's conditions) or release (the released runner's).
    protocol: str = DEFAULT_PROTOCOL
    literacy: str | None = None  # release: the patient's health-literacy variant replayed
    max_tokens: int | None = None  # output budget of the model under test; None: endpoint/role default


def protocol_manifest(*, judge: Any, options: RunOptions) -> dict[str, Any]:
    """``manifest["protocol"]``: the protocol and every setting it fixes (see :mod:`evaluation.protocols`)."""
    describe = judge.describe()
    judge_kind = "rules" if describe.get("name") == "rules" else "llm"
    out = protocol_settings(
        protocol=options.protocol,
        literacy=options.literacy,
        max_steps=options.max_steps,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        live_patient=options.live_patient,
        judge_kind=judge_kind,
    ).as_dict()
    if options.protocol == "release":
        out["prompt_hash"] = RELEASE_PROMPT_HASH
    return out


def _session_schema_hash(*, dataset: EvalDataset, language: str) -> str:
    """Under ``release`` each session brings its own schemas: SHA-256 of the distinct sets offered."""
    offered = sorted(
        {
            json.dumps(release_tools(session=s, language=language), sort_keys=True, ensure_ascii=False)
            for s in dataset.sessions
        }
    )
    return hashlib.sha256("\n".join(offered).encode("utf-8")).hexdigest()


def build_manifest(
    *, agent: Agent, judge: Any, dataset: EvalDataset, options: RunOptions, endpoint: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "model": agent.name,
        "agent": agent.describe(),
        "endpoint": endpoint,
        "parameters": asdict(options),
        "dataset": {
            "source": dataset.source,
            "label": dataset.label,
            "snapshot_id": dataset.snapshot_id,
            "checksum": dataset.checksum,
            "n_sessions": len(dataset.sessions),
            "session_ids": [s.session_id for s in dataset.entries()],
        },
        "protocol": protocol_manifest(judge=judge, options=options),
        "tool_schema_hash": {
            lang: _session_schema_hash(dataset=dataset, language=lang)
            if options.protocol == "release"
            else schema_hash(language=lang)
            for lang in options.languages
        },
        "judge": judge.describe(),
        "code_version": code_version(),
        "python": platform.python_version(),
        "django": django.get_version(),
    }
