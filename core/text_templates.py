"""English message templates that are also gettext msgids, filled with ``%`` to store a text and read back
from a stored text to ``(key, params)`` to show it in the UI language.

Used by :mod:`scenarios.rubric_reasons` (judge reasons), :mod:`scenarios.gate_messages` (quality gate
failures) and :mod:`ehr.fhir.errors` (refused tool calls): all store English, so exports, caches and what a
model reads stay byte-identical, and all translate on display.
"""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def compile_template(template: str, *, param_patterns: dict[str, str], default: str = ".*?") -> re.Pattern[str]:
    """A regex that matches what ``template % params`` wrote, with one named group per placeholder."""
    parts, last, seen = [], 0, set()
    for match in _PLACEHOLDER.finditer(template):
        name = match.group(1)
        parts.append(re.escape(template[last : match.start()]))
        # A placeholder used twice matches the same text twice.
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>{param_patterns.get(name, default)})")
        seen.add(name)
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts), re.S)


def parse_text(text: str, *, patterns: dict[str, re.Pattern[str]]) -> tuple[str, dict[str, str]] | None:
    """``(key, params)`` of the first pattern (in order) that matches all of ``text``; ``None`` if none does."""
    for key, pattern in patterns.items():
        match = pattern.fullmatch(text or "")
        if match:
            return key, match.groupdict()
    return None
