"""Field-level diffs of turn content: character-level for Chinese, word-level for everything else.

The result is plain data a template can loop over::

    {% for op in field_diff.ops %}<span class="{{ op.tag }}">{{ op.before }}|{{ op.after }}</span>{% endfor %}

``op.tag`` is one of ``equal``, ``replace``, ``delete``, ``insert`` (difflib's opcodes); ``before`` and
``after`` are the joined text of each side (``equal`` ops carry the same text on both sides).
Joining every op's ``before`` gives the old text back, every op's ``after`` the new one.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from annotations.content import flatten

# Words, runs of whitespace and single punctuation marks: tokens keep the spaces, so joining restores the text.
_WORD = re.compile(r"\s+|\w+|[^\w\s]")


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
    return tuple(Op(tag, "".join(a[i1:i2]), "".join(b[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes())


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
