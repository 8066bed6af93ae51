"""The gold audit: re-execute the gold EHR calls, trace the numbers, check the request's premises.

:func:`audit_sessions` audits every turn of the given sessions and stores one
:class:`~scenarios.models.GoldAudit` row per turn (replacing the previous run's), so that the
review screen can show a turn's findings. It only reads the record and the gold: nothing of the
session changes, and it never fails because of what it finds.

Per gold step, by the tool's kind: EHR tools (and unknown tool names, which are a finding of their
own when stored as a result) are re-executed with :func:`ehr.fhir.execute_tool` in the session's
context (``current_date``, ``subject_id``, ``hadm_id``, ``session_id``, ``bounds``) and compared with
the stored observation on facts (:mod:`scenarios.audit.facts`); patient, write and control tools are
counted as not re-executed (a patient's answer is replayed, a write is simulated). A call is
``reproduced``, ``differs`` (the differing facts are listed) or a ``leak``: its stored observation
holds a fact dated on/after 00:00 of ``current_date`` (under ``release`` bounds only Observation
resources count, as only Observation.search is time-bounded there); a leak is reported even if
the re-execution happens to agree.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from ehr.fhir import REGISTRY, ToolContext, canonical_name, execute_tool
from ehr.fhir.context import check_bounds
from ehr.fhir.legacy import upgrade_arguments
from scenarios.audit import knowledge, numbers, premises, selectors
from scenarios.audit.canonical import canonical, compare_canonical
from scenarios.audit.facts import compare, leaks, result_facts
from scenarios.audit.report import COUNT_KEYS, AuditReport, SessionResult, TurnResult
from scenarios.models import GoldAudit, GoldStep, RubricItem, Session, Turn

NOT_REEXECUTED = frozenset({"patient", "write", "control"})
MAX_LISTED = 20  # differences / leaks listed per call (the count says how many there were)
_RELEASE_LEAK_TYPES = frozenset({"Observation"})

Progress = Callable[[int, int], None]
# Big JSON columns of a session the audit does not read.
_UNREAD = ("tools", "tools_zh", "session_plan", "dep_graph", "patient_memory", "patient_agent_annotations", "extra")


def _kind(tool: str) -> str:
    name = canonical_name(tool)
    return REGISTRY[name].kind if name else "unknown"


def _differences(*, stored: Any, fresh: Any) -> tuple[list[Any], list[str]]:
    """Compare on record identity and canonical facts; a non-FHIR result on its leaf facts."""
    a, b = canonical(stored), canonical(fresh)
    if a is not None and b is not None:
        found = compare_canonical(stored=a, fresh=b)
        return found.differences, found.representation
    return compare(stored=result_facts(stored), fresh=result_facts(fresh)), []


def audit_call(*, step: GoldStep, context: ToolContext) -> dict[str, Any]:
    """One gold step: its status (reproduced | differs | leak | not_reexecuted) and what was found."""
    kind = _kind(step.tool)
    call: dict[str, Any] = {"step": step.idx, "tool": step.tool, "kind": kind}
    if kind in NOT_REEXECUTED:
        return {**call, "status": "not_reexecuted"}
    fresh = execute_tool(name=step.tool, arguments=step.arguments, context=context)
    stored = result_facts(step.observation)
    differences, representation = _differences(stored=step.observation, fresh=fresh)
    cutoff = dt.datetime.combine(context.current_date, dt.time.min)
    only = _RELEASE_LEAK_TYPES if context.bounds == "release" else None
    late = leaks(stored=stored, cutoff=cutoff, only_types=only)
    call["status"] = "leak" if late else "differs" if differences else "reproduced"
    call["arguments"] = step.arguments
    if representation:
        call["representation"] = representation
    if differences:
        call["n_differences"] = len(differences)
        call["differences"] = [d.to_dict() for d in differences[:MAX_LISTED]]
    if late:
        call["n_leaks"] = len(late)
        call["leaks"] = [leak.to_dict() for leak in late[:MAX_LISTED]]
    upgraded, _left = upgrade_arguments(tool=step.tool, arguments=step.arguments)
    if isinstance(step.arguments, dict) and set(upgraded) != set(step.arguments):
        call["noncontract_arguments"] = sorted(set(step.arguments) - set(upgraded))
    call["_differences"] = differences
    return call


def _call_finding(call: dict[str, Any]) -> dict[str, Any]:
    status, step, tool = call["status"], call["step"], call["tool"]
    if status == "leak":
        what = "; ".join(f"{x['resource']} {x['fact']} {x['value']}" for x in call["leaks"][:3])
        message = f"gold call {step} {tool} depends on data dated on/after the current date: {what}"
    else:
        what = "; ".join(d.describe() for d in call["_differences"][:3])
        more = f" (+{call['n_differences'] - 3} more)" if call["n_differences"] > 3 else ""
        message = f"gold call {step} {tool} differs from its stored observation: {what}{more}"
    keep = ("step", "tool", "differences", "n_differences", "leaks", "n_leaks")
    return {"kind": status, **{k: call[k] for k in keep if k in call}, "message": message}


_PLACE_LABEL = {"answer": "answer", "rubric": "rubric item"}


def _number_findings(*, turn: Turn, pool: numbers.Pool) -> list[dict[str, Any]]:
    texts: list[tuple[dict[str, Any], str]] = [
        ({"field": "answer", "language": "en"}, turn.answer_en),
        ({"field": "answer", "language": "zh"}, turn.answer_zh),
    ]
    for item in sorted(turn.rubric_items.all(), key=lambda r: r.idx):
        texts.append(({"field": "rubric", "item": item.idx, "language": "en"}, item.text_en))
        texts.append(({"field": "rubric", "item": item.idx, "language": "zh"}, item.text_zh))
    grouped: dict[tuple[str, str], dict[str, Any]] = {}
    for place, text in texts:
        for miss in numbers.untraced(text=text or "", pool=pool):
            source = knowledge.trace(text=text, number=miss.token) if miss.token is not None else None
            if source is not None:
                known = grouped.setdefault(
                    (miss.text, "knowledge"),
                    {
                        "kind": "knowledge",
                        "number": miss.text,
                        "entry": source.key,
                        "source": source.source,
                        "places": [],
                    },
                )
                if place not in known["places"]:
                    known["places"].append(place)
                continue
            entry = grouped.setdefault(
                (miss.text, miss.reason),
                {"kind": "untraced", "number": miss.text, "reason": miss.reason, "places": []},
            )
            if miss.record_units:
                entry["record_units"] = list(miss.record_units)
            if place not in entry["places"]:
                entry["places"].append(place)
    out = []
    for entry in grouped.values():
        if entry["kind"] == "knowledge":
            entry["message"] = f"{entry['number']} is a published threshold or score constant ({entry['entry']})"
            out.append(entry)
            continue
        where = ", ".join(
            f"{_PLACE_LABEL[p['field']]}{' ' + str(p['item']) if 'item' in p else ''} ({p['language'].upper()})"
            for p in entry["places"]
        )
        units = f" (the record has it in {', '.join(entry['record_units'])})" if entry.get("record_units") else ""
        entry["message"] = f"{entry['number']} in {where} is in no observation or derivation of the session{units}"
        out.append(entry)
    return out


def _requests(turn: Turn) -> list[str]:
    return [getattr(turn, form) for form in premises.FORMS]


def audit_session(*, session: Session, bounds: str) -> SessionResult:
    """The audit of one session (turns, steps and rubric items prefetched by the caller)."""
    context = ToolContext.for_session(session, bounds=bounds)
    at_cutoff = ToolContext.for_session(session, bounds="strict")
    lexicon = premises.lexicon_for(subject_id=session.subject_id)
    result = SessionResult(session.record_id, session.pk, session.current_date.isoformat())
    turns = sorted(session.turns.all(), key=lambda t: t.index)
    earlier_steps: list[GoldStep] = []
    requests: list[str] = []
    derivations: list[Any] = []
    for turn in turns:
        steps = sorted(turn.steps.all(), key=lambda s: s.idx)
        calls = [audit_call(step=s, context=context) for s in steps]
        findings = [_call_finding(c) for c in calls if c["status"] in ("differs", "leak")]
        for c in calls:
            c.pop("_differences", None)
        requests += _requests(turn)
        derivations += numbers.derivation_sources(turn.derivations)
        earlier_steps += [s for s in steps if s.tool != "prepare_to_answer"]
        pool = numbers.pool_for(
            env_info=session.env_info, requests=requests, steps=earlier_steps, derivations=derivations
        )
        findings += _number_findings(turn=turn, pool=pool)
        texts = {form: getattr(turn, form) for form in premises.FORMS}
        findings += [p.to_dict() for p in premises.check_premises(texts=texts, context=at_cutoff, lexicon=lexicon)]
        statuses = [c["status"] for c in calls]
        counts = {
            "calls": sum(1 for s in statuses if s != "not_reexecuted"),
            "reproduced": statuses.count("reproduced"),
            "differs": statuses.count("differs"),
            "leaks": statuses.count("leak"),
            "not_reexecuted": statuses.count("not_reexecuted"),
            "untraced": sum(1 for f in findings if f["kind"] == "untraced"),
            "premises": sum(1 for f in findings if f["kind"] == "premise"),
        }
        result.turns.append(TurnResult(turn.pk, turn.index, counts, calls, findings))
    return result


def _store(*, result: SessionResult, bounds: str, ran_at: dt.datetime) -> None:
    """Replace the session's audit rows with this run's (one transaction: never half a session)."""
    rows = [
        GoldAudit(
            turn_id=t.turn_id,
            bounds=bounds,
            ran_at=ran_at,
            calls=t.calls,
            findings=t.findings,
            **{f"n_{k}": t.counts[k] for k in COUNT_KEYS},
        )
        for t in result.turns
    ]
    turn_ids = [t.turn_id for t in result.turns]
    with transaction.atomic():
        GoldAudit.objects.filter(turn_id__in=turn_ids).delete()
        GoldAudit.objects.bulk_create(rows)
        selectors.forget_audits()  # committed with the rows: every process reads them anew


def audit_sessions(
    *, sessions: Iterable[Session], bounds: str = "strict", progress: Progress | None = None
) -> AuditReport:
    """Audit ``sessions`` (in ``record_id`` order) under ``bounds`` and store a GoldAudit row per turn.

    ``progress(done, total)`` is called after each session. Each session's rows are written in
    their own transaction, so an interrupted run keeps the sessions it finished.
    """
    check_bounds(bounds)
    pks = list(sessions.values_list("pk", flat=True)) if isinstance(sessions, QuerySet) else [s.pk for s in sessions]
    turns = Turn.objects.order_by("index").prefetch_related(
        Prefetch("steps", queryset=GoldStep.objects.order_by("idx")),
        Prefetch("rubric_items", queryset=RubricItem.objects.order_by("idx")),
    )
    qs = (
        Session.objects.filter(pk__in=pks)
        .defer(*_UNREAD)
        .order_by("record_id")
        .prefetch_related(Prefetch("turns", queryset=turns))
    )
    report = AuditReport(bounds=bounds, ran_at=timezone.now())
    total = len(pks)
    for done, session in enumerate(qs.iterator(chunk_size=50), start=1):
        result = audit_session(session=session, bounds=bounds)
        _store(result=result, bounds=bounds, ran_at=report.ran_at)
        report.sessions.append(result)
        if progress is not None:
            progress(done, total)
    return report
