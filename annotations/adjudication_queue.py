"""The adjudication queue in words: why each turn needs adjudication, what resolving one did, and which turn
is next (issue 35: the queue did not say why, and resolving a turn offered no next one).

A turn needs adjudication when all its assigned reviews are in and they disagree or propose edits
(:func:`annotations.services.reviews.finalise`); :func:`why` names which of the two it is, from the reviews.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from django.db.models import F
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotations import diffs
from annotations.models import Adjudication, Chosen, Decision, Review, TurnState, status_label
from annotations.selectors import adjudication_queue
from scenarios.models import Turn

LABELS = ("A", "B")


def edit_count(*, review: Review) -> int:
    """The fields a review changes relative to the content it was written against (field level, as the
    adjudication screen counts them)."""
    if not review.has_edits:
        return 0
    return len(diffs.diff_content(review.base_content or {}, review.proposed or {}))


def _decision(review: Review) -> str:
    text = str(review.get_decision_display()).lower()
    if review.decision == Decision.REJECT and review.reject_reason:
        return _("%(decision)s (reason: %(reason)s)") % {"decision": text, "reason": review.get_reject_reason_display()}
    return text


def _edits(reviews: Sequence[Review]) -> str:
    parts = []
    for label, review in zip(LABELS, reviews, strict=False):
        n = edit_count(review=review)
        if n:
            parts.append(
                ngettext("review %(label)s proposes %(n)s change", "review %(label)s proposes %(n)s changes", n)
                % {"label": label, "n": n}
            )
    return "; ".join(parts)


def why(*, reviews: Sequence[Review]) -> str:
    """Why the submitted ``reviews`` (A, B in submission order) send the turn to adjudication, e.g.
    "Decisions differ: review A: approve vs review B: reject (reason: not grounded in the record)."."""
    if not reviews:
        return ""
    edits = _edits(reviews)
    decisions = {r.decision for r in reviews}
    if len(decisions) > 1:
        a, b = (
            _("review %(label)s: %(decision)s") % {"label": label, "decision": _decision(r)}
            for label, r in zip(LABELS, reviews[:2], strict=True)
        )
        versus = _("%(a)s vs %(b)s") % {"a": a, "b": b}
        text = _("Decisions differ: %(versus)s.") % {"versus": versus}
        if edits:
            text = " ".join((text, _("Edits: %(edits)s.") % {"edits": edits}))
        return text
    if edits:
        return _("Both %(decision)s, with edits: %(edits)s.") % {"decision": _decision(reviews[0]), "edits": edits}
    return _("The reviews agree (%(decision)s) without edits.") % {"decision": _decision(reviews[0])}


def reasons(*, turns: Iterable[Turn]) -> list[tuple[Turn, str]]:
    """Each turn with :func:`why` it needs adjudication; one query for all their submitted assigned reviews."""
    turns = list(turns)
    by_turn: dict[int, list[Review]] = defaultdict(list)
    submitted = (
        Review.objects.filter(
            turn__in=[t.pk for t in turns],
            submitted_at__isnull=False,
            reviewer__assignments__session_id=F("turn__session_id"),
        )
        .only("turn_id", "decision", "reject_reason", "proposed", "base_content", "submitted_at")
        .order_by("submitted_at", "pk")
    )
    for review in submitted:
        by_turn[review.turn_id].append(review)
    return [(turn, why(reviews=by_turn[turn.pk])) for turn in turns]


def next_turn(*, after: Turn) -> Turn | None:
    """The next turn in the adjudication queue's order after ``after`` (wrapping round), or None when
    the queue is empty."""
    queue = adjudication_queue().exclude(pk=after.pk)
    key = (after.session.record_id, after.index)
    turns = list(queue.only("pk", "index", "session__record_id"))
    later = [t for t in turns if (t.session.record_id, t.index) > key]
    return (later or turns or [None])[0]


def resolved(*, turn: Turn, adjudication: Adjudication) -> str:
    """What resolving did, e.g. "Adjudicated turn 2 of REC-7 — Approved: review A taken (version 3)."."""
    if adjudication.chosen in (Chosen.REVIEW_A, Chosen.REVIEW_B):
        how = _("review %(label)s taken") % {"label": adjudication.chosen.upper()}
    elif adjudication.chosen == Chosen.MERGED:
        how = _("merged content")
    else:
        how = _("edited content")
    status = status_label(TurnState.APPROVED if adjudication.decision == Decision.APPROVE else TurnState.REJECTED)
    if adjudication.decision == Decision.REJECT and adjudication.reject_reason:
        status = _("%(decision)s (reason: %(reason)s)") % {
            "decision": status,
            "reason": adjudication.get_reject_reason_display(),
        }
    return _("Adjudicated turn %(index)s of %(record)s — %(status)s: %(how)s (version %(version)s).") % {
        "index": turn.index + 1,
        "record": turn.session.record_id,
        "status": status,
        "how": how,
        "version": adjudication.version,
    }
