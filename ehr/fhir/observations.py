"""Observation.search: labs (labevents), vital signs (chartevents + omr) and microbiology (its own module).

The lab path is the hot one (benchmarked in bench/tool_latency.py): one SQL round trip that
resolves an exact label inside the query, counts matches with a window function and fetches only
the columns it renders. Patient/encounter checks and fuzzy code resolution only run when that
query found nothing, to tell "no results" apart from "bad patient / encounter / code".
"""

from __future__ import annotations

from typing import Any

from ehr.fhir import codes
from ehr.fhir.common import (
    bundle,
    check_scope,
    check_window,
)
from ehr.fhir.context import ToolContext
from ehr.fhir.microbiology import search_micro
from ehr.fhir.observation_common import newest, unknown_code
from ehr.fhir.observation_labs import search_labs
from ehr.fhir.observation_vitals import search_vitals


def observation_search(*, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    check_window(args=args)
    category = args["category"]
    if category == "laboratory":
        found, total = search_labs(args=args, context=context, strict=True)
    elif category == "vital-signs":
        found, total = search_vitals(args=args, context=context, strict=True)
    elif category == "microbiology":
        found, total = search_micro(args=args, context=context)
    elif context.bounds == "release":
        # the release searches labs for any category but vitals, no category included (semantics file §1)
        found, total = search_labs(args=args, context=context, strict=False)
    else:
        found, total = [], 0
        for search in (search_labs, search_vitals):
            part, n = search(args=args, context=context, strict=False)
            found, total = found + part, total + n
        part, n = search_micro(args=args, context=context)
        found, total = newest(found + part, count=args["_count"]), total + n
    # Unknown patient/encounter is an error, not "no results". The lab search has checked the scope
    # already whenever it found nothing, so that is done for "laboratory" and for no category.
    if not found and category in ("vital-signs", "microbiology"):
        check_scope(args=args, context=context)
    if not found and category is None:
        code = args["code"]
        if code is not None and not (codes.resolve_lab(code).itemids or codes.resolve_vital(code).itemids):
            raise unknown_code(code=code, category="laboratory, vital-signs or microbiology")
    return bundle(found, total=total)
