"""Keeping an imported value verbatim for as long as the data it was derived from is unchanged.

Our model normalises some PhysAssistBench fields (the gold conversation is rebuilt from the turns;
``tools_en`` is the same list as ``tools``; ``generated_at`` is a datetime). When an imported value
differs from what we would render, we store it with a *basis*: a digest of our own rendering at
import time. On export the stored value wins only while our rendering still has that digest, i.e.
nobody edited what it depends on; after an edit, our rendering is exported instead.
"""

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    # Compare JSON texts, not Python values: 1 == 1.0 == True in Python but not in the file.
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _without_negative_zero(value: Any) -> Any:
    if isinstance(value, float):
        return 0.0 if value == 0 else value
    if isinstance(value, list):
        return [_without_negative_zero(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_negative_zero(v) for k, v in value.items()}
    return value


def digest(value: Any) -> str:
    text = canonical_json(value)
    if "-0.0" in text:
        # PostgreSQL's jsonb has no negative zero (-0.0 comes back as 0.0): a basis must survive storage.
        text = canonical_json(_without_negative_zero(value))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def same_json(a: Any, b: Any) -> bool:
    return canonical_json(a) == canonical_json(b)


def keep(*, original: Any, ours: Any) -> dict[str, Any] | None:
    """``None`` when ``original`` is what we render anyway, else the entry to store."""
    if same_json(original, ours):
        return None
    return {"value": original, "basis": digest(ours)}


def choose(*, stored: dict[str, Any] | None, ours: Any) -> Any:
    """The stored original while its basis still matches our rendering, else our rendering."""
    if stored and stored.get("basis") == digest(ours):
        return stored["value"]
    return ours


# --- values written back with their imported JSON text ------------------------------------------
# A value of an unknown top-level field is exported with the text it was imported with (its
# spelling: key order, spacing, escapes, ``1.50``), while it is unchanged. The value handed to the
# writer is a subclass of its own type that also carries the text, so code that reads records as
# plain JSON values keeps working and :func:`~scenarios.pab.writer.dumps_record` can find the text.


class _SpelledDict(dict):
    json_text: str


class _SpelledList(list):
    json_text: str


class _SpelledStr(str):
    json_text: str


class _SpelledInt(int):
    json_text: str


class _SpelledFloat(float):
    json_text: str


_SPELLED: dict[type, type] = {
    dict: _SpelledDict,
    list: _SpelledList,
    str: _SpelledStr,
    int: _SpelledInt,
    float: _SpelledFloat,
}


def canonical_text(value: Any) -> str:
    """How the writer spells a value it has no imported text for (see ``dumps_record``)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def keep_spelling(*, value: Any, text: str) -> dict[str, str] | None:
    """``None`` when ``text`` is how we would write ``value`` anyway, else the entry to store."""
    if text == canonical_text(value) or type(value) not in _SPELLED:
        return None  # true / false / null have one spelling
    return {"text": text, "basis": digest(value)}


def spelled(*, stored: dict[str, str] | None, value: Any) -> Any:
    """``value`` carrying its imported text while the value is unchanged, else ``value`` itself."""
    if not stored or stored.get("basis") != digest(value) or type(value) not in _SPELLED:
        return value
    out = _SPELLED[type(value)](value)
    out.json_text = stored["text"]
    return out


def spelling_of(value: Any) -> str | None:
    return getattr(value, "json_text", None)
