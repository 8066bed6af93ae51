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


def digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:32]


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
