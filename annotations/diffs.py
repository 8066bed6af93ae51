"""Field-level diffs of turn content: character-level for Chinese, word-level for everything else.

The result is plain data a template can loop over::

    {% for op in field_diff.ops %}<span class="{{ op.tag }}">{{ op.before }}|{{ op.after }}</span>{% endfor %}

``op.tag`` is one of ``equal``, ``replace``, ``delete``, ``insert`` (difflib's opcodes); ``before`` and
``after`` are the joined text of each side (``equal`` ops carry the same text on both sides).
Joining every op's ``before`` gives the old text back, every op's ``after`` the new one.

:func:`side_by_side` compares one current snapshot with several proposals (adjudication): each text stays
whole, the current one marking what a proposal removes, each proposal marking what it inserts.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from annotations.content import flatten

# Words, runs of whitespace and single punctuation marks: tokens keep the spaces, so joining restores the text.
# A number with its decimal point, date or ratio separators is one token: "1.4" → "1.6" reads as one change.
_WORD = re.compile(r"\s+|\d+(?:[.,:/-]\d+)*|\w+|[^\w\s]")


@dataclass(frozen=True)
class Op:
    tag: str
    before: str
    after: str


@dataclass(frozen=True)
class FieldDiff:
    field: str
    lang: str  # "zh" (character level) or "en" (word level; also JSON values)
    before: str
    after: str
    ops: tuple[Op, ...]

    @property
    def changed(self) -> bool:
        return self.before != self.after


def tokens(text: str, *, lang: str) -> list[str]:
    """Characters for Chinese, words/whitespace/punctuation otherwise."""
    if lang == "zh":
        return list(text)
    return _WORD.findall(text)


def diff_text(before: str, after: str, *, lang: str) -> tuple[Op, ...]:
    a, b = tokens(before, lang=lang), tokens(after, lang=lang)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    ops = [Op(tag, "".join(a[i1:i2]), "".join(b[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    return tuple(ops if lang == "zh" else _join_changes(ops))


def _join_changes(ops: list[Op]) -> list[Op]:
    """Changes separated only by a space become one change: "Reports creatinine" → "TAB TWO" reads as
    ~~Reports creatinine~~ TAB TWO, not ~~Reports~~TAB ~~creatinine~~TWO (issue 35)."""
    out: list[Op] = []
    for op in ops:
        if op.tag != "equal" and len(out) >= 2 and out[-2].tag != "equal":
            gap = out[-1]
            both_sides = (out[-2].before or op.before) and (out[-2].after or op.after)
            if gap.tag == "equal" and gap.before.isspace() and both_sides:
                out[-2:] = [
                    Op("replace", out[-2].before + gap.before + op.before, out[-2].after + gap.after + op.after)
                ]
                continue
        out.append(op)
    return [Op("replace", op.before, op.after) if op.tag != "equal" and op.before and op.after else op for op in out]


def field_lang(field: str) -> str:
    return "zh" if field.endswith("_zh") else "en"


def as_text(value: Any) -> str:
    """Strings as they are; None as empty; anything else as stable, readable JSON (Chinese unescaped)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def diff_field(field: str, before: Any, after: Any) -> FieldDiff:
    lang = field_lang(field)
    a, b = as_text(before), as_text(after)
    return FieldDiff(field=field, lang=lang, before=a, after=b, ops=diff_text(a, b, lang=lang))


def diff_content(before: dict[str, Any], after: dict[str, Any], *, changed_only: bool = True) -> list[FieldDiff]:
    """One :class:`FieldDiff` per flattened field of two content snapshots (see annotations.content)."""
    a, b = flatten(before), flatten(after)
    keys = list(a) + [k for k in b if k not in a]
    out = [diff_field(k, a.get(k), b.get(k)) for k in keys]
    return [d for d in out if d.changed] if changed_only else out


@dataclass(frozen=True)
class Segment:
    """A run of a text; ``marks``: for the current text, the labels of the proposals that remove or replace
    it; for a proposal, ``("+",)`` when it is inserted (or replaces something). Empty: unchanged."""

    text: str
    marks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Proposal:
    label: str
    changed: bool
    segments: tuple[Segment, ...]  # the proposal's whole text (empty when it leaves the field unchanged)


@dataclass(frozen=True)
class SideBySideRow:
    field: str
    lang: str
    current: tuple[Segment, ...]
    proposals: tuple[Proposal, ...]


def _runs(pieces: list[tuple[str, tuple[str, ...]]]) -> tuple[Segment, ...]:
    """Adjacent pieces with the same marks joined into one segment."""
    out: list[Segment] = []
    for text, marks in pieces:
        if not text:
            continue
        if out and out[-1].marks == marks:
            out[-1] = Segment(out[-1].text + text, marks)
        else:
            out.append(Segment(text, marks))
    return tuple(out)


def removals(before: str, afters: dict[str, str], *, lang: str) -> tuple[Segment, ...]:
    """``before`` as segments marked with the labels of the ``afters`` that delete or replace them."""
    a = tokens(before, lang=lang)
    marks: list[list[str]] = [[] for _ in a]
    for label, after in afters.items():
        matcher = difflib.SequenceMatcher(a=a, b=tokens(after, lang=lang), autojunk=False)
        for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
            if tag != "equal":
                for i in range(i1, i2):
                    marks[i].append(label)
    return _runs([(token, tuple(m)) for token, m in zip(a, marks, strict=True)])


def insertions(before: str, after: str, *, lang: str) -> tuple[Segment, ...]:
    """``after`` as segments, the ones not in ``before`` (inserted or replacing) marked ``+``."""
    return _runs([(op.after, () if op.tag == "equal" else ("+",)) for op in diff_text(before, after, lang=lang)])


def side_by_side(current: dict[str, Any], proposals: dict[str, dict[str, Any]]) -> list[SideBySideRow]:
    """One row per flattened field that at least one proposal (label → full snapshot) changes, in the
    order of the current content; every proposal has a cell in every row (``changed`` False: untouched)."""
    per_label = {label: {d.field: d for d in diff_content(current, other)} for label, other in proposals.items()}
    fields = list(dict.fromkeys(field for diffs in per_label.values() for field in diffs))
    order = {field: i for i, field in enumerate(flatten(current))}
    fields.sort(key=lambda f: order.get(f, len(order)))
    rows = []
    for field in fields:
        lang = field_lang(field)
        touched = {label: diffs[field] for label, diffs in per_label.items() if field in diffs}
        before = next(iter(touched.values())).before
        rows.append(
            SideBySideRow(
                field=field,
                lang=lang,
                current=removals(before, {label: d.after for label, d in touched.items()}, lang=lang),
                proposals=tuple(
                    Proposal(label, True, insertions(before, touched[label].after, lang=lang))
                    if label in touched
                    else Proposal(label, False, ())
                    for label in proposals
                ),
            )
        )
    return rows
