"""Reads over sessions (no writes here)."""

from collections.abc import Iterable

from django.db import connection
from django.db.models import F, Prefetch, QuerySet
from django.db.models.functions import Collate

from scenarios.models import GoldStep, RubricItem, Session, Turn


def sessions_for_export(
    *,
    scenarios: Iterable[str] | None = None,
    tiers: Iterable[int] | None = None,
    statuses: Iterable[str] | None = None,
) -> QuerySet[Session]:
    """Sessions matching every given filter (each a set of allowed values), in byte order of ``record_id``,
    with turns, gold steps and rubric items prefetched in their own order."""
    qs = Session.objects.all()
    if scenarios:
        qs = qs.filter(scenario__in=list(scenarios))
    if tiers:
        qs = qs.filter(tier__in=list(tiers))
    if statuses:
        qs = qs.filter(status__in=list(statuses))
    turns = Turn.objects.order_by("index").prefetch_related(
        Prefetch("steps", queryset=GoldStep.objects.order_by("idx")),
        Prefetch("rubric_items", queryset=RubricItem.objects.order_by("idx")),
    )
    return qs.order_by(_bytewise("record_id")).prefetch_related(Prefetch("turns", queryset=turns))


def _bytewise(field: str) -> F | Collate:
    # PostgreSQL sorts text by locale (en_US ignores '_' at first); exports must sort the same everywhere.
    return Collate(F(field), "C") if connection.vendor == "postgresql" else F(field)


LANGUAGES = ("en", "zh")


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r} (expected one of: {', '.join(LANGUAGES)})")


def session_tool_schemas(*, session: Session, language: str) -> list[dict]:
    """The tool schemas a run in ``language`` gives the assistant: a Chinese run uses ``tools_zh`` when
    the session has them, else the English ``tools`` (as the released runner does)."""
    _check_language(language)
    if language == "zh" and session.tools_zh is not None:
        return session.tools_zh
    return session.tools


def turn_gold_steps(*, turn: Turn, language: str) -> list[GoldStep]:
    """The gold steps of a run in ``language``, in order: for Chinese the imported ``answer_list_zh``
    entry when the turn has one (unsaved :class:`GoldStep` objects built from it), else the turn's
    own steps (prefetched ``steps`` are used)."""
    # Imported here: scenarios.pab imports this module (sessions_for_export).
    from scenarios.pab.layout import ANSWER_LIST_ZH
    from scenarios.pab.schema import parse_steps

    _check_language(language)
    raw = (turn.extra or {}).get(ANSWER_LIST_ZH) if language == "zh" else None
    if raw is None:
        return sorted(turn.steps.all(), key=lambda s: s.idx)
    return [GoldStep(turn=turn, **vars(step)) for step in parse_steps(raw, f"answer_list_zh[{turn.index}]")]
