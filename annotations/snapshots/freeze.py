"""Which sessions a snapshot takes and their frozen content.

A session is curated when it has turns and every one of them is finally approved
(:attr:`TurnState.APPROVED`, after review or adjudication); its content is then the turn rows as
they stand. With a language filter, a session must also be complete in each chosen language (no empty
request, answer or rubric text), since those rows are what the flat files carry.

Freezing writes one :class:`SnapshotItem` per session: the PhysAssistBench line of
:func:`scenarios.pab.dumps_record` (same writer as ``export_pab``) and the per-turn review facts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet

from annotations.models import Adjudication, Review, Revision, Snapshot, SnapshotItem, TurnApproval, TurnState
from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.integrity import InconsistentRecord, describe
from annotations.snapshots.rows import flat_source_json
from scenarios.gold_answer import answer_mismatches
from scenarios.models import Scenario, Session, Turn
from scenarios.pab import dumps_record, session_to_record
from scenarios.selectors import sessions_for_export

LANGUAGES = ("en", "zh")
FREEZE_CHUNK = 100


def normalize_filters(
    *, scenarios: Iterable[str] | None, tiers: Iterable[int] | None, languages: Iterable[str] | None
) -> dict[str, list[Any]]:
    """Validated, sorted filters (empty scenarios/tiers = all; languages default to both)."""
    scenarios = sorted(set(scenarios or []))
    if bad := [s for s in scenarios if s not in Scenario.values]:
        raise SnapshotError(
            f"unknown {'scenario' if len(bad) == 1 else 'scenarios'}: {', '.join(bad)} "
            f"(known: {', '.join(Scenario.values)})"
        )
    try:
        tiers = sorted({int(t) for t in (tiers or [])})
    except (TypeError, ValueError):
        raise SnapshotError(f"tiers must be integers 1, 2 or 3 (got {tiers!r})") from None
    if bad_tiers := [t for t in tiers if t not in (1, 2, 3)]:
        raise SnapshotError(
            f"unknown {'tier' if len(bad_tiers) == 1 else 'tiers'}: {', '.join(map(str, bad_tiers))} "
            "(tiers are 1, 2, 3)"
        )
    languages = sorted(set(languages or LANGUAGES))
    if bad_lang := [x for x in languages if x not in LANGUAGES]:
        raise SnapshotError(
            f"unknown {'language' if len(bad_lang) == 1 else 'languages'}: {', '.join(bad_lang)} (use en, zh or both)"
        )
    return {"scenarios": scenarios, "tiers": tiers, "languages": languages}


def curated_sessions(*, filters: dict[str, list[Any]]) -> QuerySet[Session]:
    """Sessions whose turns are all approved *at their current version* (an edit after approval takes the
    session out until it is confirmed) and complete in the chosen languages, matching the filters."""
    approved_now = TurnApproval.objects.filter(turn_id=OuterRef("pk"), version=OuterRef("version"))
    unapproved = Turn.objects.exclude(status=TurnState.APPROVED) | Turn.objects.filter(~Exists(approved_now))
    qs = (
        Session.objects.annotate(n_turns=Count("turns", distinct=True))
        .filter(n_turns__gt=0)
        .exclude(pk__in=unapproved.values("session_id"))
    )
    if filters["scenarios"]:
        qs = qs.filter(scenario__in=filters["scenarios"])
    if filters["tiers"]:
        qs = qs.filter(tier__in=filters["tiers"])
    for lang in filters["languages"]:
        empty = Turn.objects.filter(
            Q(**{f"request_implicit_{lang}": ""})
            | Q(**{f"request_explicit_{lang}": ""})
            | Q(**{f"answer_{lang}": ""})
            | Q(**{f"rubric_items__text_{lang}": ""})
        )
        qs = qs.exclude(pk__in=empty.values("session_id"))
    return qs


def review_state(*, filters: dict[str, list[Any]]) -> dict[str, Any]:
    """What the review stood at when the content was frozen: turn counts per status, latest ids."""
    turns = Turn.objects.all()
    if filters["scenarios"]:
        turns = turns.filter(session__scenario__in=filters["scenarios"])
    if filters["tiers"]:
        turns = turns.filter(session__tier__in=filters["tiers"])
    counts = dict(turns.values_list("status").annotate(n=Count("pk")).order_by("status"))
    return {
        "turn_status_counts": {k: counts[k] for k in sorted(counts)},
        "latest_review_id": Review.objects.aggregate(m=Max("pk"))["m"],
        "latest_revision_id": Revision.objects.aggregate(m=Max("pk"))["m"],
        "latest_adjudication_id": Adjudication.objects.aggregate(m=Max("pk"))["m"],
    }


def _review_facts(*, turn_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per turn: reviewers with a submitted review and the latest adjudicator (usernames)."""
    facts: dict[int, dict[str, Any]] = {t: {"reviewers": [], "adjudicator": None} for t in turn_ids}
    reviews = Review.objects.filter(turn_id__in=turn_ids, submitted_at__isnull=False)
    for turn_id, username in reviews.values_list("turn_id", "reviewer__username"):
        facts[turn_id]["reviewers"].append(username)
    adjudications = Adjudication.objects.filter(turn_id__in=turn_ids).order_by("turn_id", "created", "pk")
    for turn_id, username in adjudications.values_list("turn_id", "adjudicator__username"):
        facts[turn_id]["adjudicator"] = username
    # Who approved which version: the approval of the version frozen (the latest one, by curation).
    approvals = TurnApproval.objects.filter(turn_id__in=turn_ids).order_by("turn_id", "version")
    for turn_id, version, via, approvers, created in approvals.values_list(
        "turn_id", "version", "via", "approvers", "created"
    ):
        facts[turn_id]["approval"] = {
            "version": version,
            "via": via,
            "approvers": approvers,
            "approved_at": created.isoformat(),
        }
    for fact in facts.values():
        fact["reviewers"].sort()
    return facts


def _generation(session: Session) -> dict[str, Any]:
    run = session.run
    llm = (session.gate_report or {}).get("llm") or {}
    return {
        "run_id": run.pk if run else None,
        "backend": run.backend if run else None,
        "models": llm.get("models") or {},
    }


def freeze_items(
    *, snapshot: Snapshot, filters: dict[str, list[Any]], on_chunk: Callable[[int], None] | None = None
) -> int:
    """Write the snapshot's items (caller holds the transaction); returns the number of sessions."""
    ids = list(curated_sessions(filters=filters).values_list("pk", flat=True))
    qs = sessions_for_export().filter(pk__in=ids).select_related("run")
    count = 0
    batch: list[SnapshotItem] = []
    for session in qs.iterator(chunk_size=FREEZE_CHUNK):
        batch.append(_item(snapshot=snapshot, session=session))
        if len(batch) >= FREEZE_CHUNK:
            count += _flush(batch, on_chunk)
    count += _flush(batch, on_chunk)
    return count


def _add_facts(batch: list[SnapshotItem]) -> None:
    turn_ids = [t["turn_pk"] for item in batch for t in item.review["turns"]]
    facts = _review_facts(turn_ids=turn_ids)
    for item in batch:
        for turn in item.review["turns"]:
            turn.update(facts[turn["turn_pk"]])


def unsaved_items(*, filters: dict[str, list[Any]]) -> list[SnapshotItem]:
    """The items a snapshot with ``filters`` would freeze now, not saved, in export order (byte order of
    ``record_id``): what a duplicate check writes to compare content checksums."""
    ids = list(curated_sessions(filters=filters).values_list("pk", flat=True))
    qs = sessions_for_export().filter(pk__in=ids).select_related("run")
    items = [_item(snapshot=None, session=session) for session in qs.iterator(chunk_size=FREEZE_CHUNK)]
    for start in range(0, len(items), FREEZE_CHUNK):
        _add_facts(items[start : start + FREEZE_CHUNK])
    return sorted(items, key=lambda item: item.record_id.encode("utf-8"))


def _flush(batch: list[SnapshotItem], on_chunk: Callable[[int], None] | None) -> int:
    if not batch:
        return 0
    _add_facts(batch)
    SnapshotItem.objects.bulk_create(batch)
    n = len(batch)
    batch.clear()
    if on_chunk:
        on_chunk(n)
    return n


def _item(*, snapshot: Snapshot | None, session: Session) -> SnapshotItem:
    turns = sorted(session.turns.all(), key=lambda t: t.index)
    # Checked again while freezing: the content may have changed since start_snapshot looked.
    for turn in turns:
        if problems := answer_mismatches(turn=turn):
            raise InconsistentRecord(
                "refusing to freeze: " + describe(record_id=session.record_id, index=turn.index, problems=problems)
            )
    line = dumps_record(session_to_record(session))
    return SnapshotItem(
        snapshot=snapshot,
        record_id=session.record_id,
        session_pk=session.pk,
        scenario=session.scenario,
        tier=session.tier,
        source=session.source,
        n_turns=len(turns),
        record_json=line,
        flat_json=flat_source_json(line),
        review={
            "turns": [{"index": t.index, "turn_pk": t.pk, "version": t.version} for t in turns],
            "generation": _generation(session),
        },
        sha256=hashlib.sha256(line.encode("utf-8")).hexdigest(),
    )
