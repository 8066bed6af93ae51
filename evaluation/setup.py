"""Building a run's parts from command arguments, with clear errors before any work starts.

Every function here raises :class:`EvalSetupError` (a ``ValueError``) with a message naming the bad
argument: a missing snapshot, an empty selection, a missing API key variable, an endpoint that does
not answer.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from core.llm import LLMClient, LLMConfigError
from core.llm.data_use import MIMIC, SYNTHETIC, DataUseRule, rule_for
from evaluation import dataset as ds
from evaluation.agents.llm import OpenAIAgent, endpoint_info, llm_config
from evaluation.agents.rules import rules_agent
from evaluation.judges.llm import LLMJudge
from evaluation.judges.release import ReleaseJudge
from evaluation.judges.rules import RulesJudge
from evaluation.protocols import DEFAULT_PROTOCOL
from evaluation.services import RunOptions


class EvalSetupError(ValueError):
    pass


def load_dataset(*, snapshot: str, sessions: str = "approved", limit: int | None = None) -> ds.EvalDataset:
    """``snapshot``: ``auto`` (latest ready snapshot, else approved DB sessions), ``latest``, ``vN``, ``none``.

    With ``none`` (or ``auto`` and no snapshot yet) the sessions come from the database: those whose
    every turn is approved, or all of them with ``sessions="all"`` (the demo), streamed (see
    :mod:`evaluation.session_stream`). ``limit``: only the first N sessions (as ``EvalDataset.limited``).
    """
    ref = snapshot.strip().lower()
    if ref not in {"auto", "none"}:
        try:
            return ds.from_snapshot(ds.resolve_snapshot(ref)).limited(limit)
        except ValueError as exc:
            raise EvalSetupError(f"--snapshot {snapshot}: {exc}") from None
    if ref == "auto" and ds.snapshots_available():
        try:
            return ds.from_snapshot(ds.resolve_snapshot("latest")).limited(limit)
        except ValueError:
            pass  # no ready snapshot yet: evaluate from the database
    from scenarios.models import Session

    if sessions == "all":
        data = ds.from_sessions(Session.objects.all(), label="db:all", limit=limit)
    elif sessions == "approved":
        data = ds.from_sessions(ds.approved_sessions(), label="db:approved", limit=limit)
    else:
        raise EvalSetupError(f"--sessions {sessions!r}: expected 'approved' or 'all'")
    if not data.sessions:
        hint = " (try --sessions all to evaluate every session, e.g. on the demo)" if sessions == "approved" else ""
        raise EvalSetupError(f"no {sessions} sessions in the database to evaluate{hint}")
    return data


def check_requests(dataset: ds.EvalDataset, *, languages: tuple[str, ...], variants: tuple[str, ...]) -> None:
    """Every turn has a request in each chosen language (a snapshot may be frozen in one language only);
    a streamed dataset answers from its references, without reading the sessions again."""
    for entry in dataset.entries():
        for index, forms in entry.request_forms:
            for language in languages:
                if not any((v, language) in forms for v in variants):
                    raise EvalSetupError(
                        f"session {entry.session_id} turn {index} has no {language} request in "
                        f"{dataset.label}; choose --language {'en' if language == 'zh' else 'zh'}"
                    )


def dataset_for_run(manifest: dict[str, Any]) -> ds.EvalDataset:
    """The dataset a stored run evaluated (for --resume / --rejudge); refuses one whose content changed."""
    info = manifest.get("dataset") or {}
    if info.get("source") == "snapshot":
        from evaluation.session_stream import SessionStream

        data = load_dataset(snapshot=str(info.get("label")))
        ids = set(info.get("session_ids") or [])
        chosen = SessionStream(r for r in data.entries() if r.session_id in ids)
        return ds.EvalDataset(data.source, data.label, data.snapshot_id, data.checksum, chosen)
    from evaluation.session_stream import SessionStream
    from scenarios.models import Session

    ids = info.get("session_ids") or []
    data = ds.from_sessions(Session.objects.filter(session_id__in=ids), label=info.get("label", "db"))
    order = {sid: i for i, sid in enumerate(ids)}
    sessions = SessionStream(sorted(data.entries(), key=lambda s: order[s.session_id]))
    checksum = ds.content_checksum(sessions)
    if checksum != info.get("checksum") or len(sessions) != len(ids):
        raise EvalSetupError(
            "the database sessions this run evaluated have changed since (checksum differs); "
            "it cannot be resumed or rejudged against other content"
        )
    return ds.EvalDataset("db", data.label, None, checksum, sessions)


def check_reachable(base_url: str, *, timeout_s: float = 5.0) -> None:
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout_s):
            return
    except OSError as exc:
        raise EvalSetupError(
            f"the endpoint {parts.scheme}://{parts.hostname}:{port} is unreachable ({exc.strerror or exc})"
        ) from None


def dataset_origin(*, dataset: ds.EvalDataset) -> str:
    """``mimic`` or ``synthetic``, by the snapshot card's rule (annotations.snapshots.card.mimic_derived): MIMIC
    unless the EHR store is declared synthetic — by the snapshot's ``--ehr-provenance`` when it declared one, else
    by ``PHYSREVIEW_EHR_PROVENANCE`` — and no session is an imported release record (PhysAssistBench is MIMIC-IV)."""
    from annotations.models import Snapshot
    from annotations.snapshots.card import mimic_derived
    from scenarios.models import Session, Source

    provenance = settings.EHR_PROVENANCE
    if dataset.snapshot_id is not None:
        filters = Snapshot.objects.filter(pk=dataset.snapshot_id).values_list("filters", flat=True).first() or {}
        if filters.get("ehr_provenance", "undeclared") != "undeclared":
            provenance = filters["ehr_provenance"]
    if provenance != SYNTHETIC:
        return MIMIC
    ids = [entry.session_id for entry in dataset.entries()]
    imported = any(
        Session.objects.filter(source=Source.IMPORTED, session_id__in=ids[start : start + 500]).exists()
        for start in range(0, len(ids), 500)
    )
    return MIMIC if mimic_derived(sources=["imported"] if imported else [], ehr_provenance=provenance) else SYNTHETIC


def data_use_record(agent: Any, judge: Any, *, dataset: ds.EvalDataset) -> dict[str, Any]:
    """What the run manifest keeps of the data-use rules in force: the data's origin and, per LLM role the run
    uses (rules agents and judges send nothing anywhere), the rule its client checked."""
    roles = {}
    for part in (agent, judge):
        rule = getattr(getattr(part, "client", None), "data_use", None)
        if rule is not None:
            roles[rule.role] = rule.manifest()
    return {"origin": dataset_origin(dataset=dataset), "roles": roles}


def _client(config: Any, *, origin: str) -> LLMClient:
    try:
        rule: DataUseRule = rule_for(role=config.role, origin=origin)
        return LLMClient(config=config, data_use=rule)
    except LLMConfigError as exc:
        raise EvalSetupError(str(exc)) from None


def build_agent(
    *,
    model: str,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
    reasoning_effort: str | None,
    concurrency: int,
    max_tokens: int | None = None,
    origin: str = MIMIC,
) -> tuple[Any, dict[str, Any] | None]:
    """``(agent, endpoint info for the manifest)``; built-in ``rules:*`` agents need no endpoint."""
    if model.startswith("rules:"):
        try:
            return rules_agent(model), None
        except ValueError as exc:
            raise EvalSetupError(f"--model: {exc}") from None
    try:
        config = llm_config(
            model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature, concurrency=concurrency
        )
    except LLMConfigError as exc:
        raise EvalSetupError(str(exc)) from None
    client = _client(config, origin=origin)
    check_reachable(config.base_url)
    agent = OpenAIAgent(
        client=client, temperature=temperature, reasoning_effort=reasoning_effort, max_tokens=max_tokens
    )
    return agent, endpoint_info(config)


def build_judge(
    *,
    judge: str,
    base_url: str | None,
    api_key_env: str | None,
    concurrency: int,
    protocol: str = DEFAULT_PROTOCOL,
    origin: str = MIMIC,
) -> Any:
    """The rules judge (any protocol), or an LLM judge: the release's inputs under ``--protocol release``."""
    if judge == "rules":
        return RulesJudge()
    try:
        config = llm_config(
            model=judge,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=0,
            concurrency=concurrency,
            role="judge",
        )
    except LLMConfigError as exc:
        raise EvalSetupError(f"--judge: {exc}") from None
    client = _client(config, origin=origin)
    check_reachable(config.base_url)
    return ReleaseJudge(client=client) if protocol == "release" else LLMJudge(client=client)


def options_for_run(run: Any, *, concurrency: int | None = None) -> RunOptions:
    params = dict(run.manifest.get("parameters") or {})
    params["languages"], params["variants"] = tuple(params["languages"]), tuple(params["variants"])
    if concurrency is not None:
        params["concurrency"] = concurrency
    return RunOptions(**params)


def parts_for_run(
    run: Any,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
    judge_base_url: str | None = None,
) -> tuple[Any, Any, ds.EvalDataset, RunOptions]:
    """``(agent, judge, dataset, options)`` of a stored run, rebuilt from its manifest (resume, workers);
    the protocol and its settings come back with the options (a run made before protocols existed
    has none stored and is a ``physreview`` run).

    ``base_url`` / ``api_key_env`` override the stored endpoint (it may have moved; a judge that lived
    on the same endpoint moves with it unless ``judge_base_url`` says otherwise); the key itself is read
    from the environment of the process that runs the jobs.
    """
    options = options_for_run(run, concurrency=concurrency)
    endpoint = run.manifest.get("endpoint") or {}
    dataset = dataset_for_run(run.manifest)
    origin = dataset_origin(dataset=dataset)
    agent, _ = build_agent(
        model=run.model,
        base_url=base_url or endpoint.get("base_url"),
        api_key_env=api_key_env or endpoint.get("api_key_env"),
        temperature=options.temperature,
        reasoning_effort=options.reasoning_effort,
        concurrency=options.concurrency,
        max_tokens=options.max_tokens,
        origin=origin,
    )
    judge_info = run.manifest.get("judge") or {}
    judge_endpoint = judge_info.get("endpoint") or {}
    stored_judge_url = judge_endpoint.get("base_url")
    if judge_base_url is None and base_url and stored_judge_url == endpoint.get("base_url"):
        judge_base_url = base_url
    judge = build_judge(
        judge=judge_info.get("name", "rules"),
        base_url=judge_base_url or stored_judge_url or base_url or endpoint.get("base_url"),
        api_key_env=judge_endpoint.get("api_key_env") or api_key_env or endpoint.get("api_key_env"),
        concurrency=options.concurrency,
        protocol=options.protocol,
        origin=origin,
    )
    return agent, judge, dataset, options
