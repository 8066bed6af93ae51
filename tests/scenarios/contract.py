"""Checks that gold calls are in the released tool contract: the official tooling knows no alias."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from ehr.fhir import REGISTRY, ToolContext, execute_tool, register_patient_responder
from scenarios.patient import make_patient_responder
from scenarios.rubric_checks import write_call_contract_problems


def contract_problems(
    *,
    session_id: str,
    subject_id: int,
    hadm_id: int,
    current_date: str | dt.date,
    steps: Iterable[tuple[int, str, dict[str, Any], Any]],
    checks: Iterable[Any] = (),
) -> list[str]:
    """Problems of the gold steps ``(turn, tool, arguments, observation)`` and rubric ``checks``: argument names
    outside the tool's contract, a re-run that warns or fails, an EHR or write result that differs."""
    day = current_date if isinstance(current_date, dt.date) else dt.date.fromisoformat(current_date)
    context = ToolContext(current_date=day, subject_id=subject_id, hadm_id=hadm_id, session_id=session_id)
    problems = []
    register_patient_responder(make_patient_responder())
    try:
        for turn, tool, arguments, observation in steps:
            where = f"{session_id} turn {turn} {tool}"
            contract = [p.name for p in REGISTRY[tool].params]
            if unknown := sorted(set(arguments) - set(contract)):
                problems.append(f"{where}: not contract parameters {unknown}")
            result = execute_tool(name=tool, arguments=arguments, context=context)
            if "warnings" in result or "error" in result:
                problems.append(f"{where}: {result.get('warnings') or result.get('error')}")
            elif REGISTRY[tool].kind in ("ehr", "write") and result != observation:
                problems.append(f"{where}: re-run differs from the stored observation")
    finally:
        register_patient_responder(None)
    problems += [p for check in checks for p in write_call_contract_problems(check)]
    return problems
