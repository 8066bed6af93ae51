"""The LLM endpoints of a run (model under test, LLM judge): checked before the run, recorded in the
manifest, and set up the same way in every process that plays it.

:func:`prepare_endpoints` asks each endpoint what it serves (``GET /models``: the model name must be
among the served ones; see :mod:`core.llm.preflight`), puts the server fingerprint into the
client's cache key, applies ``--no-cache`` and ``--judge-max-tokens``, and returns what
``manifest["llm"]`` keeps per role: the effective output budget, timeout, retries, cache switch and
the server's model list and fingerprint. :func:`restore_endpoints` applies a stored ``manifest["llm"]``
without asking the endpoint again (Celery workers).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from core.llm import LLMClient, ServerInfo, preflight, require_tools
from core.llm.config import display_url
from evaluation.models import EvalRun


def clients(*, agent: Any, judge: Any) -> dict[str, LLMClient]:
    """The run's LLM clients by part (``model_under_test``, ``judge``); rules parts have none."""
    found = {"model_under_test": getattr(agent, "client", None), "judge": getattr(judge, "client", None)}
    return {part: client for part, client in found.items() if isinstance(client, LLMClient)}


def _set(client: LLMClient, **changes: Any) -> None:
    # The client reads its configuration per call; the concurrency limit and key are not changed here.
    client.config = dataclasses.replace(client.config, **changes)


def describe(*, client: LLMClient, server: ServerInfo | dict[str, Any] | None) -> dict[str, Any]:
    config = client.config
    return {
        "model": config.model,
        "base_url": display_url(config.base_url),
        "max_tokens": config.max_tokens,
        "max_tokens_field": config.max_tokens_field,
        "timeout_s": config.timeout_s,
        "max_retries": config.max_retries,
        "cache": config.cache,
        "server": server.as_dict() if isinstance(server, ServerInfo) else server,
    }


def prepare_endpoints(
    *,
    agent: Any,
    judge: Any,
    no_cache: bool = False,
    judge_max_tokens: int | None = None,
    stored: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Preflight and set up the run's clients; ``(manifest["llm"], warnings)``.

    ``stored``: the ``manifest["llm"]`` of the run being resumed (its judge budget is kept unless
    ``judge_max_tokens`` is given; a server whose fingerprint changed since is reported in the
    warnings). Raises :class:`~core.llm.LLMConfigError` for a model the endpoint does not serve.
    """
    stored = stored or {}
    out: dict[str, Any] = {}
    warnings: list[str] = []
    seen: dict[int, ServerInfo] = {}
    for part, client in clients(agent=agent, judge=judge).items():
        if no_cache:
            _set(client, cache=False)
        budget = judge_max_tokens if part == "judge" else None
        if budget is None and part == "judge" and "max_tokens" in (stored.get(part) or {}):
            budget = stored[part]["max_tokens"] or 0  # 0: no limit, as stored
        if budget is not None:
            _set(client, max_tokens=budget or None)
        info = seen.get(id(client)) or preflight(client=client)
        seen[id(client)] = info
        if part == "model_under_test":  # the judge is sent no tools
            require_tools(client=client, info=info)
        before = ((stored.get(part) or {}).get("server") or {}).get("fingerprint")
        if before and info.fingerprint and before != info.fingerprint:
            warnings.append(
                f"{part}: the server at {display_url(client.config.base_url)} serves {client.config.model!r} "
                "differently from when the run started (other model file or chat template); the turns played "
                "now come from the new server"
            )
        out[part] = describe(client=client, server=info)
        if before and before != info.fingerprint:
            out[part]["server_at_start"] = (stored.get(part) or {}).get("server")
    return out, warnings


def restore_endpoints(*, run: EvalRun, agent: Any, judge: Any) -> None:
    """Apply the run's stored ``manifest["llm"]`` (fingerprint, cache switch, judge budget) to its clients."""
    stored = (run.manifest or {}).get("llm") or {}
    for part, client in clients(agent=agent, judge=judge).items():
        settings = stored.get(part) or {}
        client.server_fingerprint = (settings.get("server") or {}).get("fingerprint") or ""
        if settings.get("cache") is False:
            _set(client, cache=False)
        if part == "judge" and "max_tokens" in settings:
            _set(client, max_tokens=settings["max_tokens"])


def record_endpoints(*, run: EvalRun, llm: dict[str, Any]) -> None:
    """Keep ``manifest["llm"]`` (set at the start of every play: a resume may change the cache switch)."""
    manifest = dict(EvalRun.objects.filter(pk=run.pk).values_list("manifest", flat=True).first() or {})
    manifest["llm"] = llm
    EvalRun.objects.filter(pk=run.pk).update(manifest=manifest)
    run.manifest = manifest
