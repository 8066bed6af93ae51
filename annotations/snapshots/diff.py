"""Differences between two snapshots: added, removed and changed sessions and turns.

Sessions are matched by ``record_id``, turns by index. A changed turn names the fields that differ
(``answer_zh``, ``rubric_en``, ``gold_steps`` …); a changed session also names its changed
session-level fields. Both snapshots are read as streams in the same byte order (a merge join), so
memory holds one session of each at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from annotations.models import Snapshot
from annotations.snapshots.rows import answers, field_of
from annotations.snapshots.selectors import iter_items
from scenarios.pab.layout import EXTENSION_FIELD, PER_TURN_FIELDS
from scenarios.pab.verbatim import same_json

# Top-level PAB fields holding one entry per turn: compared turn by turn, not as session fields.
PER_TURN = frozenset(PER_TURN_FIELDS)


@dataclass
class TurnChange:
    record_id: str
    index: int
    fields: list[str]


@dataclass
class SessionChange:
    record_id: str
    fields: list[str]  # session-level fields
    turns_changed: list[TurnChange] = field(default_factory=list)
    turns_added: list[int] = field(default_factory=list)
    turns_removed: list[int] = field(default_factory=list)


@dataclass
class SnapshotDiff:
    old: str
    new: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[SessionChange] = field(default_factory=list)
    unchanged: int = 0
    added_turns: int = 0
    removed_turns: int = 0

    @property
    def changed_turns(self) -> list[TurnChange]:
        return [t for s in self.changed for t in s.turns_changed]

    def summary(self) -> str:
        return (
            f"{self.old} → {self.new}: sessions +{len(self.added)} −{len(self.removed)} ~{len(self.changed)} "
            f"(={self.unchanged}); turns +{self.added_turns} −{self.removed_turns} ~{len(self.changed_turns)}"
        )


def turn_fields(record: dict[str, Any], index: int) -> dict[str, Any]:
    """The comparable content of turn ``index`` of a PAB record, in both languages."""
    ext = (record.get(EXTENSION_FIELD) or {}).get("turns") or []
    ext_turn = ext[index] if index < len(ext) else {}
    return {
        "task_type": field_of(record, "task_types")[index],
        "is_implicit": record["turn_types"][index],
        "subtype": record["turn_subtypes"][index],
        "tool_source": record["tool_sources"][index],
        "workup_mode": record["workup_modes"][index],
        "request_implicit_en": field_of(record, "tasks")[index],
        "request_explicit_en": field_of(record, "tasks_explicit")[index],
        "request_implicit_zh": record["tasks_zh"][index],
        "request_explicit_zh": record["tasks_zh_explicit"][index],
        "answer_en": answers(record=record, language="en")[index],
        "answer_zh": answers(record=record, language="zh")[index],
        "rubric_en": record["rubrics"][index],
        "rubric_zh": record["rubrics_zh"][index],
        "rubric_meta": ext_turn.get("rubric"),
        "gold_steps": record["answer_list"][index],
        "derivations": ext_turn.get("derivations"),
    }


def _session_fields(record: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k not in PER_TURN and k != EXTENSION_FIELD}
    out["patient_memory"] = (record.get(EXTENSION_FIELD) or {}).get("patient_memory")
    return out


def compare_records(old: dict[str, Any], new: dict[str, Any]) -> SessionChange | None:
    a, b = _session_fields(old), _session_fields(new)
    change = SessionChange(
        record_id=new["id"], fields=sorted(k for k in a.keys() | b.keys() if not same_json(a.get(k), b.get(k)))
    )
    n_old, n_new = len(old["turn_types"]), len(new["turn_types"])
    for i in range(min(n_old, n_new)):
        ta, tb = turn_fields(old, i), turn_fields(new, i)
        if changed := [k for k in ta if not same_json(ta[k], tb[k])]:
            change.turns_changed.append(TurnChange(record_id=new["id"], index=i, fields=changed))
    change.turns_added = list(range(n_old, n_new))
    change.turns_removed = list(range(n_new, n_old))
    if change.fields or change.turns_changed or change.turns_added or change.turns_removed:
        return change
    return None


def _stream(snapshot: Snapshot) -> Iterator[tuple[str, str, str, int]]:
    for item in iter_items(snapshot=snapshot):
        yield item.record_id, item.sha256, item.record_json, item.n_turns


def diff_snapshots(*, old: Snapshot, new: Snapshot) -> SnapshotDiff:
    result = SnapshotDiff(old=old.label, new=new.label)
    a_iter, b_iter = _stream(old), _stream(new)
    a, b = next(a_iter, None), next(b_iter, None)
    # Byte order of UTF-8 equals code-point order, so Python's str comparison matches the query's order.
    while a is not None or b is not None:
        if b is None or (a is not None and a[0].encode() < b[0].encode()):
            result.removed.append(a[0])
            result.removed_turns += a[3]
            a = next(a_iter, None)
        elif a is None or b[0].encode() < a[0].encode():
            result.added.append(b[0])
            result.added_turns += b[3]
            b = next(b_iter, None)
        else:
            if a[1] == b[1]:
                result.unchanged += 1
            elif change := compare_records(json.loads(a[2]), json.loads(b[2])):
                result.changed.append(change)
                result.added_turns += len(change.turns_added)
                result.removed_turns += len(change.turns_removed)
            else:
                result.unchanged += 1
            a, b = next(a_iter, None), next(b_iter, None)
    return result
