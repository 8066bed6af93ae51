"""Database sessions and snapshot items streamed instead of held: a run keeps a light reference per session and loads a
session's turns, gold steps and rubric only while a job plays it (issue 37: memory flat in the number of
sessions).

:func:`stream_sessions` reads the selection once, in chunks, to build the references and the content
checksum (byte for byte the one :func:`evaluation.dataset.content_checksum` gives over the whole
tuple), and keeps no session. :class:`SessionStream` is the ``sessions`` of such a dataset: a sequence
whose ``len`` and ``refs`` need no loading, and whose iteration loads a chunk at a time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

CHUNK = 32


@dataclass(frozen=True)
class SessionRef:
    """One session of a streamed dataset: what scheduling needs, and how to load the rest."""

    session_id: str
    n_turns: int
    pk: int
    loader: Callable[[Sequence[SessionRef]], list[Any]] = field(compare=False, repr=False)
    request_forms: tuple[tuple[int, frozenset[tuple[str, str]]], ...] = field(default=(), repr=False)

    def load(self) -> Any:
        return self.loader((self,))[0]


class SessionStream(Sequence):
    """Sessions in a fixed order, loaded ``CHUNK`` at a time whenever they are iterated."""

    def __init__(self, refs: Iterable[SessionRef]) -> None:
        self.refs = tuple(refs)

    def __len__(self) -> int:
        return len(self.refs)

    def __iter__(self) -> Iterator[Any]:
        for start in range(0, len(self.refs), CHUNK):
            chunk = self.refs[start : start + CHUNK]
            yield from chunk[0].loader(chunk)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return SessionStream(self.refs[index])
        return self.refs[index].load()


def eval_rows(queryset: Any) -> Any:
    """``queryset`` with what an ``EvalSession`` is built from and nothing else: the sessions' and turns'
    review and generation JSON (plans, personas, gate reports) is neither read nor decoded."""
    from django.db.models import Prefetch

    from evaluation.dataset import SESSION_FIELDS, TURN_FIELDS
    from scenarios.models import Turn

    turns = Turn.objects.only("session_id", "index", "extra", *TURN_FIELDS)
    return queryset.only("pk", *SESSION_FIELDS).prefetch_related(
        Prefetch("turns", queryset=turns), "turns__steps", "turns__rubric_items"
    )


def load_db_sessions(refs: Sequence[SessionRef]) -> list[Any]:
    """The ``EvalSession`` of each reference (database rows), in the references' order."""
    from evaluation.dataset import session_from_model
    from scenarios.models import Session

    rows = eval_rows(Session.objects.filter(pk__in=[r.pk for r in refs]))
    by_pk = {row.pk: row for row in rows}
    return [session_from_model(by_pk[r.pk]) for r in refs]


class Checksum:
    """SHA-256 of ``json.dumps([asdict(s) for s in sessions], ...)`` fed one session at a time: the
    list's JSON is ``[`` + its items joined by ``,`` + ``]`` with these separators."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256(b"[")
        self._first = True

    def add(self, text: str) -> None:
        self._hash.update(text.encode("utf-8") if self._first else b"," + text.encode("utf-8"))
        self._first = False

    def hexdigest(self) -> str:
        final = self._hash.copy()
        final.update(b"]")
        return final.hexdigest()


def stream_sessions(queryset: Any) -> tuple[tuple[SessionRef, ...], str]:
    """References to the sessions of ``queryset`` (in its order) and their content checksum, reading the
    rows ``CHUNK`` at a time."""
    from evaluation.dataset import session_from_model, session_json

    rows = eval_rows(queryset).iterator(chunk_size=CHUNK)
    refs, checksum = [], Checksum()
    for row in rows:
        session = session_from_model(row)
        checksum.add(session_json(session))
        refs.append(SessionRef(session.session_id, len(session.turns), row.pk, load_db_sessions, session.request_forms))
    return tuple(refs), checksum.hexdigest()


def load_snapshot_sessions(refs: Sequence[SessionRef]) -> list[Any]:
    """The ``EvalSession`` of each reference (frozen snapshot items, by item pk), in the references' order."""
    import json

    from annotations.models import SnapshotItem
    from evaluation.dataset import session_from_record

    texts = dict(SnapshotItem.objects.filter(pk__in=[r.pk for r in refs]).values_list("pk", "record_json"))
    return [session_from_record(json.loads(texts[r.pk])) for r in refs]


def stream_snapshot(snapshot: Any, *, checksum: bool) -> tuple[tuple[SessionRef, ...], str]:
    """References to a ready snapshot's items (in its order) and, when asked (an older snapshot without a stored
    content checksum), their content checksum; each record is parsed once here and again when played."""
    import json

    from annotations.snapshots.selectors import iter_items
    from evaluation.dataset import session_from_record, session_json

    refs, digest = [], Checksum()
    for item in iter_items(snapshot=snapshot):
        session = session_from_record(json.loads(item.record_json))
        if checksum:
            digest.add(session_json(session))
        refs.append(
            SessionRef(session.session_id, len(session.turns), item.pk, load_snapshot_sessions, session.request_forms)
        )
    return tuple(refs), digest.hexdigest() if checksum else ""
