"""Reads for the review screens: blind review visibility, queues, history, agreement input."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Func, JSONField, Q, QuerySet, Value
from django.db.models.fields.json import KeyTransform

from annotations import agreement
from annotations.blind import review_visibility, visible_reviews_filter
from annotations.guidelines import render_markdown
from annotations.models import Adjudication, Assignment, Guideline, Review, Revision, RevisionKind, TurnState
from core.cache_generations import bump, generation
from scenarios.models import Turn

# Large JSON columns of a session (and turn) that turn listings never show: decoding them for every
# row of a queue cost ~1 ms per turn (a queue of 100 turns spent 100 ms in json.loads).
LISTING_DEFERRED = (
    *(
        f"session__{name}"
        for name in (
            "tools",
            "tools_zh",
            "session_plan",
            "dep_graph",
            "persona",
            "patient_memory",
            "patient_agent_annotations",
            "gate_report",
            "extra",
            "import_meta",
        )
    ),
    *("derivations", "gate_report", "extra"),  # the turn's own JSON columns, not listed either
)


def assigned_reviews(*, turn: Turn) -> list[Review]:
    """Submitted or not, the reviews of the reviewers assigned to the turn's session."""
    reviewers = Assignment.objects.filter(session_id=turn.session_id).values("reviewer_id")
    return list(Review.objects.filter(turn=turn, reviewer_id__in=reviewers).select_related("reviewer"))


def all_submitted(*, turn: Turn) -> bool:
    assigned = Assignment.objects.filter(session_id=turn.session_id).count()
    submitted = [r for r in assigned_reviews(turn=turn) if r.submitted]
    return assigned > 0 and len(submitted) == assigned


def visible_reviews(*, turn: Turn, user: Any) -> list[Review]:
    """The reviews of ``turn`` that ``user`` may see (the blind-review rule of :mod:`annotations.blind`)."""
    return review_visibility(turn=turn, user=user)[0]


PENDING_STATES = (TurnState.DRAFT, TurnState.IN_REVIEW)


def pending_filter(*, user: Any) -> Q:
    """Turns of the user's sessions still waiting for the user's submitted review (the one definition of
    "pending", for the queue, `j`/`k` and the progress count)."""
    done = Review.objects.filter(reviewer_id=user.pk, submitted_at__isnull=False).values("turn_id")
    assigned = Assignment.objects.filter(reviewer_id=user.pk).values("session_id")
    return Q(session_id__in=assigned, status__in=PENDING_STATES) & ~Q(pk__in=done)


def review_queue(*, user: Any) -> QuerySet[Turn]:
    """Turns of the user's sessions still waiting for the user's submitted review."""
    return (
        Turn.objects.filter(pending_filter(user=user))
        .select_related("session")
        .defer(*LISTING_DEFERRED)
        .order_by("session__record_id", "index")
    )


def next_pending(*, user: Any, after: int) -> int | None:
    """The user's next turn to review after turn ``after``: the first pending turn that comes after it in queue
    order (the rest of its session first, then the next sessions), wrapping round to the start of the queue. A turn
    the user skipped comes back only after the rest of the queue, not at every ``a`` (issue 35)."""
    position = Turn.objects.filter(pk=after).values_list("session__record_id", "index").first()
    queue = review_queue(user=user).exclude(pk=after).values_list("pk", "session__record_id", "index")
    if position is not None:
        record_id, index = position
        later = queue.filter(Q(session__record_id__gt=record_id) | Q(session__record_id=record_id, index__gt=index))
        if (pk := later.values_list("pk", flat=True).first()) is not None:
            return pk
    return queue.values_list("pk", flat=True).first()


def review_progress(*, user: Any) -> dict[str, int]:
    """``{"done": n, "total": m}`` over the turns of the user's sessions (one query): the review screen's
    "12 / 64". Done = no longer waiting for the user (submitted, or settled without them)."""
    assigned = Assignment.objects.filter(reviewer_id=user.pk).values("session_id")
    counts = Turn.objects.filter(session_id__in=assigned).aggregate(
        total=Count("pk"), pending=Count("pk", filter=pending_filter(user=user))
    )
    return {"done": counts["total"] - counts["pending"], "total": counts["total"]}


def adjudication_queue() -> QuerySet[Turn]:
    return (
        Turn.objects.filter(status=TurnState.NEEDS_ADJUDICATION)
        .select_related("session")
        .defer(*LISTING_DEFERRED)
        .order_by("session__record_id", "index")
    )


def history(*, turn: Turn, field: str | None = None, include_conflicts: bool = True) -> QuerySet[Revision]:
    """Revisions of a turn, oldest first, optionally of one flattened field (``answer_zh``, ``rubric.0.text_en``)."""
    rows = Revision.objects.filter(turn=turn).select_related("author").order_by("created", "pk")
    if field is not None:
        rows = rows.filter(Q(field=field))
    if not include_conflicts:
        rows = rows.exclude(kind=RevisionKind.CONFLICT)
    return rows


def submitted_reviews(*, viewer: Any = None) -> QuerySet[Review]:
    """Every submitted review (agreement statistics read these); with ``viewer``, only those the blind rule
    lets the viewer see (:func:`annotations.blind.visible_reviews_filter`)."""
    where = Q() if viewer is None else visible_reviews_filter(user=viewer)
    return Review.objects.filter(where, submitted_at__isnull=False).select_related("reviewer").order_by("turn_id", "pk")


class _RubricIds(Func):
    """PostgreSQL: the ids of a content snapshot's rubric items as a JSON array, taken out in the database."""

    function = "jsonb_path_query_array"
    output_field = JSONField()

    def __init__(self, column: str) -> None:
        super().__init__(column, Value("$.rubric[*].id"))


def _rubric_ids(column: str) -> Func | KeyTransform:
    if connection.vendor == "postgresql":
        return _RubricIds(column)
    return KeyTransform("rubric", column)  # other databases: the rubric items themselves


def _agreement_input(*, viewer: Any = None) -> list[SimpleNamespace]:
    """Submitted reviews as :func:`annotations.agreement.ratings_from_reviews` reads them, with only the
    rubric ids of ``proposed``/``base_content`` (decoding the full contents took ~10 ms of the
    dashboard's CPU at 272 reviews)."""
    rows = submitted_reviews(viewer=viewer).values_list(
        "turn_id", "reviewer__username", "decision", _rubric_ids("proposed"), _rubric_ids("base_content")
    )

    def rubric(items: Any) -> dict[str, Any]:
        if not isinstance(items, list):
            return {}
        return {"rubric": [item if isinstance(item, dict) else {"id": item} for item in items]}

    return [
        SimpleNamespace(
            turn_id=turn_id,
            reviewer=SimpleNamespace(get_username=lambda name=username: name),
            decision=decision,
            proposed=rubric(proposed),
            base_content=rubric(base),
        )
        for turn_id, username, decision, proposed, base in rows
    ]


def agreement_statistics(*, viewer: Any = None) -> dict[str, dict[str, Any]]:
    """Agreement among all reviewers, per kind (``decisions``, ``rubric``): ``units``, ``pairs``
    (:class:`annotations.agreement.PairStats`) and Krippendorff's ``alpha``; one query. With ``viewer``: over
    the reviews the viewer may see only (blind review; every review for adjudicators and admins)."""
    decisions, rubric = agreement.ratings_from_reviews(_agreement_input(viewer=viewer))
    return {
        name: {
            "units": len(ratings),
            "pairs": agreement.pairwise(ratings),
            "alpha": agreement.krippendorff_alpha_nominal(ratings),
        }
        for name, ratings in (("decisions", decisions), ("rubric", rubric))
    }


def status_counts(*, by: str = "session__scenario") -> dict[Any, dict[str, int]]:
    """Turn counts per status grouped by a Turn lookup (``session__scenario``, ``session__tier``,
    ``session__assignments__reviewer__username``): ``{group: {status: n}}`` in one query."""
    rows = Turn.objects.values(by, "status").annotate(n=Count("pk", distinct=True)).order_by(by, "status")
    out: dict[Any, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row[by], {})[row["status"]] = row["n"]
    return out


def rejected_by_reason() -> dict[str, int]:
    """Final rejections per reason: the adjudicator's when adjudicated, else the reviewers' (first one)."""
    counts: dict[str, int] = {}
    adjudicated = Adjudication.objects.filter(decision="reject", turn__status=TurnState.REJECTED)
    seen = set()
    for turn_id, reason in adjudicated.order_by("turn_id", "-created").values_list("turn_id", "reject_reason"):
        if turn_id not in seen:
            seen.add(turn_id)
            counts[reason] = counts.get(reason, 0) + 1
    reviewed = submitted_reviews().filter(turn__status=TurnState.REJECTED, decision="reject").exclude(turn_id__in=seen)
    for turn_id, reason in reviewed.order_by("turn_id", "submitted_at").values_list("turn_id", "reject_reason"):
        if turn_id not in seen:
            seen.add(turn_id)
            counts[reason] = counts.get(reason, 0) + 1
    return counts


# Every review screen shows the guideline; rows change only through a save or delete, which move the
# guidelines' generation (annotations.apps connects forget_guidelines): a database counter in the key, so a
# save in one server process reaches the others (issue 36, F10). The bound covers writes that send no signal.
GUIDELINES_CACHE_SECONDS = 300
GUIDELINES_GENERATION = "guidelines"


def guidelines_key() -> str:
    return f"guidelines:by-language:v2:{generation(GUIDELINES_GENERATION)}"  # v2: the rows carry their rendered html


def _guideline_rows() -> dict[str, Guideline]:
    rows = {}
    for guideline in Guideline.objects.select_related("updated_by"):
        # Rendered once with the rows (markdown then nh3 cost ~15 ms), not on every screen that shows it.
        guideline.html = render_markdown(guideline.body_markdown)
        rows[guideline.language.lower()] = guideline
    return rows


def _guidelines() -> dict[str, Guideline]:
    """A handful of rows (one per UI language): all of them, in one query, each with its ``html``."""
    return cache.get_or_set(guidelines_key(), _guideline_rows, GUIDELINES_CACHE_SECONDS)


def forget_guidelines(**_signal: Any) -> None:
    """Forget the cached guidelines in every process (in the saving transaction: seen when the save is)."""
    bump(GUIDELINES_GENERATION)


def guideline_for(*, language: str) -> Guideline | None:
    """The guideline for a UI language (``zh-hans``, ``zh-Hans``, ``zh``), falling back to English (cached)."""
    code = (language or "").lower().replace("_", "-")
    wanted = list(dict.fromkeys([code, code.split("-")[0], "zh-hans" if code.startswith("zh") else "en", "en"]))
    rows = _guidelines()
    return next((rows[c] for c in wanted if c in rows), None)


def done_reviews(*, user: Any) -> QuerySet[Review]:
    """The user's submitted reviews, newest first (the "done" list), with their turns and sessions."""
    return (
        Review.objects.filter(reviewer_id=user.pk, submitted_at__isnull=False)
        .select_related("turn__session")
        .defer(*(f"turn__{name}" for name in LISTING_DEFERRED), "base_content", "proposed")
        .order_by("-submitted_at")
    )
