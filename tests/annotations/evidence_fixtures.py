"""A session whose first turn's gold call reads PTT on a bundled demo-cohort admission (needs the
``demo_cohort`` fixture): the call run by the real tool layer, the answer citing the latest PTT.
Shared by the evidence-gate tests (services and Chromium)."""

from __future__ import annotations

import datetime as dt

from ehr.fhir import ToolContext, execute_tool
from ehr.models import DLabItem, LabEvent
from scenarios.gold_answer import write_gold_answer
from scenarios.models import GoldStep
from tests.scenarios.factories import complete_session


def ptt_session():
    """``(session, turn, latest PTT value)``."""
    ptt = DLabItem.objects.get(label="PTT")
    event = (
        LabEvent.objects.filter(itemid=ptt.itemid, hadm_id__isnull=False).order_by("subject_id", "charttime").first()
    )
    current = (event.charttime + dt.timedelta(days=1)).date()
    session = complete_session(subject_id=event.subject_id, hadm_id=event.hadm_id, current_date=current)
    turn = session.turns.get(index=0)
    arguments = {"subject_id": event.subject_id, "hadm_id": event.hadm_id, "category": "laboratory", "code": "ptt"}
    observation = execute_tool(name="Observation.search", arguments=arguments, context=ToolContext.for_session(session))
    latest = observation["entry"][0]["resource"]
    value, when = latest["valueQuantity"]["value"], latest["effectiveDateTime"][:10]
    GoldStep.objects.filter(turn=turn, idx=0).update(arguments=arguments, observation=observation)
    write_gold_answer(
        turn=turn,
        answer_en=f"The latest PTT is {value} sec ({when}).",
        answer_zh=f"最近一次 PTT 为 {value} 秒（{when}）。",
    )
    return session, turn, value
