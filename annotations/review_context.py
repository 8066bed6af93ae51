"""The clinical context of a turn shared by the review and adjudication screens: session facts, earlier
turns, gold tool calls, rubric, patient replies, admission header and the (cached, lazily read) EHR evidence.

Rendered by the ``templates/annotations/_context_*.html`` partials.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.core.cache.utils import make_template_fragment_key
from django.db.models import Prefetch, QuerySet, prefetch_related_objects
from django.utils.functional import SimpleLazyObject

from annotations.selectors import guidelines_key
from ehr.selectors import admission_evidence, admission_header, record_generation
from scenarios.audit.selectors import audit_key
from scenarios.models import GoldStep, Turn

# How long a rendered evidence panel is reused (Django cache, keyed by the record's generation, admission, date
# and UI language). The record only changes on import, which moves the generation (ehr.selectors.EHR_GENERATION).
EVIDENCE_CACHE_SECONDS = 300
# How long the review screen reuses its rendered content cards (request, gold calls, patient replies, answer,
# rubric), keyed by turn, version and UI language: every content write goes through
# annotations.services.edits.apply_content, which bumps the version, so a new version renders anew.
CONTENT_CACHE_SECONDS = 300

# Earlier turns of the session are shown as texts only.
EARLIER_FIELDS = (
    "id",
    "session_id",
    "index",
    "task_type",
    "request_explicit_en",
    "request_explicit_zh",
    "answer_en",
    "answer_zh",
)


def _steps_prefetch() -> Prefetch:
    return Prefetch("steps", queryset=GoldStep.objects.defer("dependency_list", "extra"))


def with_context(turns: QuerySet[Turn], *, content: bool = True) -> QuerySet[Turn]:
    """``turns`` loaded for :func:`turn_context`: the session joined, steps and rubric prefetched, and the
    big JSON columns nobody reads on these screens left in the database. The raw observation JSON is
    fetched when its <details> opens (step_raw), not printed inline.

    ``content=False``: steps and rubric are read by :func:`load_content` when a screen needs them, which
    the review screen does only when its cached content cards and editor are not in the cache."""
    # Imported here: annotations.views imports this module.
    from annotations.views.common import SESSION_JSON, TURN_JSON

    turns = turns.select_related("session").defer(*SESSION_JSON, *TURN_JSON)
    return turns.prefetch_related(_steps_prefetch(), "rubric_items") if content else turns


def load_content(turn: Turn) -> Turn:
    """The turn's steps and rubric items read once, in two queries (nothing when already prefetched): the
    content cards and the editor (:func:`annotations.content.snapshot`) share them."""
    prefetch_related_objects([turn], _steps_prefetch(), "rubric_items")
    return turn


def _header_key(*, subject_id: int, hadm_id: int) -> str:
    return f"review-header:{record_generation()}:{subject_id}:{hadm_id}"


def _header(*, subject_id: int, hadm_id: int) -> dict[str, Any]:
    """The patient and admission rows, cached like the evidence fragment (they change only on re-import)."""
    return cache.get_or_set(
        _header_key(subject_id=subject_id, hadm_id=hadm_id),
        lambda: admission_header(subject_id=subject_id, hadm_id=hadm_id),
        EVIDENCE_CACHE_SECONDS,
    )


def cache_keys(*, turn: Turn, language: str) -> list[str]:
    """The cache keys the review screen reads for ``turn`` whatever the user (for
    :func:`core.cacheredis.read_ahead`): the header, the guidelines, the gold audit and the content and
    evidence fragments, with the vary-on values of the ``{% cache %}``
    tags in ``review.html`` and ``_context_evidence.html``. A key that drifts from its tag costs a round
    trip, not a wrong page: the tag's own read then goes to the cache."""
    session = turn.session
    return [
        _header_key(subject_id=session.subject_id, hadm_id=session.hadm_id),
        guidelines_key(),
        audit_key(turn.pk),
        make_template_fragment_key("review_content", [turn.pk, turn.version, language]),
        make_template_fragment_key(
            "review_evidence", [record_generation(), session.hadm_id, session.current_date, language]
        ),
    ]


def turn_context(*, turn: Turn) -> dict[str, Any]:
    """Template context of the ``_context_*`` partials for ``turn`` (loaded with :func:`with_context`)."""
    session = turn.session
    return {
        "session": session,
        "earlier": list(session.turns.filter(index__lt=turn.index).order_by("index").only(*EARLIER_FIELDS)),
        # Lazy: read only when the cached content cards are rendered anew.
        "steps": SimpleLazyObject(lambda: sorted(load_content(turn).steps.all(), key=lambda s: s.idx)),
        "rubric": SimpleLazyObject(lambda: sorted(load_content(turn).rubric_items.all(), key=lambda r: r.idx)),
        "patient_replies": [
            a for a in session.patient_agent_annotations or [] if isinstance(a, dict) and a.get("turn") == turn.index
        ],
        **_header(subject_id=session.subject_id, hadm_id=session.hadm_id),
        # Read only when the template's evidence fragment is not cached (it is shared by every turn of the
        # session, every reviewer and both screens: the record at a given date does not change between imports).
        "EVIDENCE_CACHE_SECONDS": EVIDENCE_CACHE_SECONDS,
        "EHR_GENERATION": record_generation(),  # in the evidence fragment's key: an import shows anew
        "CONTENT_CACHE_SECONDS": CONTENT_CACHE_SECONDS,
        "evidence": SimpleLazyObject(
            lambda: admission_evidence(hadm_id=session.hadm_id, current_date=session.current_date)
        ),
    }
