"""What a snapshot refuses to freeze: a record that contradicts itself.

A turn's gold answer must equal its ``prepare_to_answer`` observation in both languages
(:mod:`scenarios.gold_answer`). Every writer keeps that true; this is the last line, so that a row
changed behind the services' back (raw SQL, an old import) never reaches a release.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Prefetch

from annotations.snapshots.errors import SnapshotError
from scenarios.gold_answer import PREPARE, answer_mismatches
from scenarios.models import GoldStep, Turn


class InconsistentRecord(SnapshotError):
    """A selected turn breaks the answer = prepare_to_answer invariant; the message names it."""


def describe(*, record_id: str, index: int, problems: list[str]) -> str:
    return f"session {record_id} turn {index + 1} (index {index}): {'; '.join(problems)}"


def inconsistent_turns(*, session_ids: Iterable[int]) -> list[str]:
    """One line per selected turn that breaks the invariant ([] when all hold). Loads only each turn's
    last step and its observation when it is ``prepare_to_answer`` (not the FHIR observations)."""
    ids = list(session_ids)
    if not ids:
        return []
    last_idx = {
        turn_id: idx
        for turn_id, idx in GoldStep.objects.filter(turn__session_id__in=ids)
        .order_by("turn_id", "idx")
        .values_list("turn_id", "idx")
    }
    closing = GoldStep.objects.filter(turn__session_id__in=ids, tool=PREPARE).only(
        "turn_id", "idx", "tool", "observation"
    )
    turns = (
        Turn.objects.filter(session_id__in=ids)
        .select_related("session")
        .only("index", "answer_en", "answer_zh", "extra", "session__record_id")
        .prefetch_related(Prefetch("steps", queryset=closing))
        .order_by("session__record_id", "index")
    )
    out = []
    for turn in turns:
        steps = [s for s in turn.steps.all() if s.idx == last_idx.get(turn.pk)]
        turn._prefetched_objects_cache["steps"] = steps  # only the closing step counts
        if problems := answer_mismatches(turn=turn):
            out.append(describe(record_id=turn.session.record_id, index=turn.index, problems=problems))
    return out


def refuse_inconsistent(*, session_ids: Iterable[int]) -> None:
    """Raise :class:`InconsistentRecord` naming every offending turn (at most 10, then a count)."""
    if bad := inconsistent_turns(session_ids=session_ids):
        shown = "\n  ".join(bad[:10])
        more = f"\n  ... and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise InconsistentRecord(
            f"refusing to freeze {len(bad)} {'turn' if len(bad) == 1 else 'turns'} whose gold answer differs from its "
            "prepare_to_answer "
            f"observation:\n  {shown}{more}"
        )
