"""Items that state several values joined by "and" (the release's Data Gathering "each value cited", semantics
file §3) → an ``all_of`` check with one ``value_unit`` per stated value.

"The answer correctly cites potassium as 3.2 mEq/L and magnesium as 1.5 mg/dL", ZH "答案正确引用了血钾值为3.2
mEq/L，血镁值为1.5 mg/dL": the item is whole only when *every* value holds, so each coordinated part must compile
on its own (same verb, its own subject slot, nothing left over) to a value check, and all of them together are the
check. A part that does not (a status, a relation, a drug with its frequency, a comparison) leaves the whole item
unscored, as before: a check on some of the values is not a compiled item.
"""

from __future__ import annotations

import re

from scenarios.rubric_compiler import rules_facts
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.types import Candidate
from scenarios.rubric_compiler.verbs import is_mention, lead_en, lead_zh

MAX_PARTS = 4
_SPLIT_EN = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)
_SPLIT_ZH = re.compile(r"\s*(?:[，,、；;]\s*(?:以及|和|及|与)?|以及|和|及|与)\s*")


def values_rule(text: str, *, lang: str) -> Candidate | None:
    """An ``all_of`` of value checks when the item coordinates 2–4 values, each a whole value item; else None."""
    numbers = tx.values(text, lang=lang)
    if not 2 <= len(numbers) <= MAX_PARTS or not is_mention(text, lang=lang):
        return None
    _verb, end = lead_en(text) if lang == "en" else lead_zh(text)
    body = text[end:].strip().rstrip(".。;；")
    parts = [p for p in (_SPLIT_EN if lang == "en" else _SPLIT_ZH).split(body) if p.strip()]
    if len(parts) != len(numbers):
        return None  # a part without a value (a status, a reason), or a part with two
    lead = text[:end].rstrip() + (" " if lang == "en" else "")
    checks = []
    for part in parts:
        found = rules_facts.value_rule(lead + part.strip(), lang=lang)
        if not isinstance(found, Candidate) or found.check["kind"] != "value_unit":
            return None
        checks.append(found.check)
    if len({(c["value"], c["unit"]) for c in checks}) != len(checks):
        return None
    shown = ", ".join(f"{c['value']:g} {c['unit']}".strip() for c in checks)
    return Candidate(
        {"kind": "all_of", "checks": checks},
        "all_of/values",
        0.8,
        f"the answer must state every value ({shown}), each to the decimals written",
    )
