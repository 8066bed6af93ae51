"""English → Simplified Chinese glossary of the EHR terms the cohort uses (``ehr/data/glossary.json``).

Lookups are case-insensitive and ignore surrounding whitespace and a trailing colon, so note
headings can be passed as written (``"Chief Complaint:"``). The file is read once per process.
"""

import json
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

GLOSSARY_PATH = Path(__file__).resolve().parent / "data" / "glossary.json"


def _normalize(*, term: str) -> str:
    return term.strip().removesuffix(":").strip().casefold()


@cache
def _load() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(kinds as stored, kinds keyed by normalized term); raises ValueError on a malformed file."""
    data: Any = json.loads(GLOSSARY_PATH.read_text(encoding="utf-8"))
    kinds = data.get("kinds") if isinstance(data, dict) else None
    if not isinstance(kinds, dict):
        raise ValueError(f"{GLOSSARY_PATH}: expected an object with a 'kinds' mapping")
    normalized: dict[str, dict[str, str]] = {}
    for kind, entries in kinds.items():
        if not isinstance(entries, dict) or not all(isinstance(v, str) and v for v in entries.values()):
            raise ValueError(f"{GLOSSARY_PATH}: kind {kind!r} must map terms to non-empty strings")
        table: dict[str, str] = {}
        for term, zh in entries.items():
            key = _normalize(term=term)
            if key in table and table[key] != zh:
                raise ValueError(f"{GLOSSARY_PATH}: {kind}/{term!r} is defined twice with different translations")
            table[key] = zh
        normalized[kind] = table
    return kinds, normalized


def kinds() -> list[str]:
    """The term kinds, in file order (lab, unit, drug, diagnosis, ...)."""
    return list(_load()[0])


def terms(*, kind: str) -> MappingProxyType[str, str]:
    """Read-only English → Chinese mapping for one kind; KeyError for an unknown kind."""
    stored = _load()[0]
    if kind not in stored:
        raise KeyError(f"unknown glossary kind {kind!r} (known: {', '.join(stored)})")
    return MappingProxyType(stored[kind])


def translate(*, term: str, kind: str | None = None) -> str | None:
    """Chinese for ``term`` (of ``kind`` if given, else the first kind that has it); None if unknown."""
    normalized = _load()[1]
    key = _normalize(term=term)
    if kind is not None:
        if kind not in normalized:
            raise KeyError(f"unknown glossary kind {kind!r} (known: {', '.join(normalized)})")
        return normalized[kind].get(key)
    for table in normalized.values():
        if key in table:
            return table[key]
    return None
