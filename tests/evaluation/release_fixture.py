"""Two sessions in the release's record shape over the hand-built record (tests.ehr.factories.build_record).

Every field of a released PhysAssistBench line (the release's tool schemas, ``tools_zh``,
``answer_list_zh``, ``messages`` with separators and ``messages_zh`` without, patient answers
``{"patient_response", "patient_responses_all_literacy"}``), written the way the released generator
wrote it: EHR gold observations are what the tools return under the release's bounds on the session
date 2180-07-21 (only ``Observation.search`` is time-bounded; ``date_to`` excludes the day itself).
Session A asks the patient about warfarin twice (turns 1 and 2), with two different gold answers, so
replay by call order is visible; session B ends with a Write/Update turn.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

from ehr.fhir import ToolContext, execute_tool
from scenarios.pab.schema import parse_record
from scenarios.pab.services import write_record
from tests.ehr.factories import Record

SAMPLE = Path(__file__).parents[1] / "scenarios" / "data" / "pab_release_sample.jsonl"
SEPARATOR = "=" * 60
CURRENT_DATE = dt.date(2180, 7, 21)
LABELS = {"IL": "Information Lookup", "DG": "Data Gathering", "CR": "Clinical Reasoning", "WU": "Write/Update"}
# The current admission's creatinine as the model sees it under the release: the 2.4 charted on the session
# date itself is not visible (the release's date_to excludes its own day).
CREATININE_TEXT = (
    "(3 results)\n"
    "  - Creatinine: 2 mg/dL (High) @ 2180-07-20\n"
    "  - Creatinine: 1.6 mg/dL (High) @ 2180-07-19\n"
    "  - Creatinine: 1.1 mg/dL (Normal) @ 2180-07-18"
)


def template() -> dict[str, Any]:
    return json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[1])


def patient_answer(high: str, medium: str, low: str) -> dict[str, Any]:
    return {"patient_response": medium, "patient_responses_all_literacy": {"high": high, "medium": medium, "low": low}}


def _steps(calls: list[tuple[str, dict[str, Any], Any]], *, summary: str, context: ToolContext) -> list[dict]:
    out = []
    for i, (tool, args, observation) in enumerate(calls):
        if observation is None:  # an EHR tool: what it returns under the release's bounds
            observation = execute_tool(name=tool, arguments=args, context=context)
        out.append(
            {"action": {"arguments": args, "name": tool}, "dependency_list": [], "idx": i, "observation": observation}
        )
    done = {"answer_type": "chat"}
    out.append(
        {
            "action": {"arguments": done, "name": "prepare_to_answer"},
            "dependency_list": list(range(len(calls))),
            "idx": len(calls),
            "observation": summary,
        }
    )
    return out


def _record(rec: Record, *, key: str, scenario: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    out = template()
    session_id = f"physassistbench_{key}"
    context = ToolContext(
        current_date=CURRENT_DATE,
        subject_id=rec.subject_id,
        hadm_id=rec.current_hadm,
        session_id=session_id,
        bounds="release",
    )
    out.update(
        id=key,
        session_id=session_id,
        subject_id=float(rec.subject_id),  # spelled as the release's pandas wrote it
        hadm_id=rec.current_hadm,
        current_date=CURRENT_DATE.isoformat(),
        env_info=f"session_id: {session_id}\nCurrent date: {CURRENT_DATE}. Patient is a 62-year-old F",
        clinical_scenario=scenario,
    )
    lists: dict[str, list[Any]] = {
        name: []
        for name in (
            "tasks",
            "tasks_explicit",
            "tasks_zh",
            "tasks_zh_explicit",
            "answer_list",
            "answer_list_zh",
            "turn_types",
            "task_types",
            "turn_subtypes",
            "tool_sources",
            "workup_modes",
            "rubrics",
            "rubrics_zh",
        )
    }
    messages: list[Any] = []
    messages_zh: list[Any] = []
    for i, t in enumerate(turns):
        lists["tasks"].append(t["en"])
        lists["tasks_explicit"].append(t.get("en_explicit", t["en"]))
        lists["tasks_zh"].append(t["zh"])
        lists["tasks_zh_explicit"].append(t.get("zh_explicit", t["zh"]))
        lists["answer_list"].append(_steps(t["calls"], summary=t["answer_en"], context=context))
        lists["answer_list_zh"].append(_steps(t["calls_zh"], summary=t["answer_zh"], context=context))
        lists["turn_types"].append(i > 0)
        lists["task_types"].append(LABELS[t["type"]])
        lists["turn_subtypes"].append(t.get("subtype"))
        lists["tool_sources"].append(t["source"])
        lists["workup_modes"].append("parallel" if t["type"] == "DG" else None)
        lists["rubrics"].append([en for en, _ in t["rubric"]])
        lists["rubrics_zh"].append([zh for _, zh in t["rubric"]])
        if i:
            messages.append(SEPARATOR)
        messages += [{"content": t["en"], "role": "user"}, {"content": t["answer_en"], "role": "assistant"}]
        messages_zh += [{"content": t["zh"], "role": "user"}, {"content": t["answer_zh"], "role": "assistant"}]
    out.update(lists)
    for alias, primary in (
        ("tasks_en", "tasks"),
        ("tasks_en_explicit", "tasks_explicit"),
        ("task_sequence", "task_types"),
    ):
        out[alias] = copy.deepcopy(out[primary])
    out.update(messages=messages, messages_en=copy.deepcopy(messages), messages_zh=messages_zh)
    out["dep_graph"] = {"edges": [], "nodes": {}}
    out["session_plan"] = {"turn_intents": [t["en"] for t in turns]}
    return out


WARFARIN_FIRST = patient_answer(
    "I take warfarin 5 mg every evening; I missed Sunday's dose.",
    "Warfarin 5 mg each evening, but I forgot it on Sunday.",
    "The blood thinner at night. Forgot one.",
)
WARFARIN_SECOND = patient_answer(
    "No bleeding from the gums or nose, and my stools are a normal colour.",
    "No bleeding that I have noticed.",
    "No blood.",
)
WARFARIN_FIRST_ZH = patient_answer(
    "我每晚吃华法林5毫克，周日漏了一次。", "每晚吃华法林，周日忘了。", "晚上吃抗凝药，忘过一次。"
)
WARFARIN_SECOND_ZH = patient_answer("牙龈和鼻子没有出血，大便颜色正常。", "没发现出血。", "没出血。")


def release_records(rec: Record) -> list[dict[str, Any]]:
    """Records ``release_a`` (3 turns: IL, DG mixed, DG patient) and ``release_b`` (IL, WU)."""
    s, h = rec.subject_id, rec.current_hadm
    sid_a = "physassistbench_release_a"
    creatinine = (
        "Observation.search",
        {"category": "laboratory", "code": "creatinine", "hadm_id": h, "subject_id": s},
        None,
    )
    warfarin_orders = ("MedicationRequest.search", {"hadm_id": h, "medication": "warfarin", "subject_id": s}, None)

    def adherence(sid: str, drug: str, answer: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
        return ("patient.get_medication_adherence", {"drug": drug, "session_id": sid, "subject_id": s}, answer)

    a = [
        {
            "type": "IL",
            "source": "ehr",
            "en": "What is her latest creatinine?",
            "zh": "她最近一次肌酐是多少？",
            "calls": [creatinine],
            "calls_zh": [creatinine],
            "answer_en": "Creatinine was 2.0 mg/dL on 2180-07-20 (high), up from 1.1 mg/dL on 2180-07-18.",
            "answer_zh": "2180-07-20 肌酐 2.0 mg/dL（偏高），2180-07-18 为 1.1 mg/dL。",
            "rubric": [
                ("States creatinine 2.0 mg/dL", "指出肌酐为 2.0 mg/dL"),
                ("Notes that it is rising", "指出肌酐在上升"),
                ("Mentions the date 2180-07-20", "提到日期 2180-07-20"),
            ],
        },
        {
            "type": "DG",
            "source": "mixed",
            "subtype": "NA",
            "en": "And her warfarin?",
            "en_explicit": "What warfarin is ordered for her, and how does she take it at home?",
            "zh": "那华法林呢？",
            "calls": [warfarin_orders, adherence(sid_a, "warfarin", WARFARIN_FIRST)],
            "calls_zh": [warfarin_orders, adherence(sid_a, "华法林", WARFARIN_FIRST_ZH)],
            "answer_en": "Warfarin is ordered this admission; she takes 5 mg each evening and missed Sunday's dose.",
            "answer_zh": "本次住院开具了华法林；她每晚服用 5 mg，周日漏服一次。",
            "rubric": [
                ("States warfarin is ordered", "指出已开具华法林"),
                ("States she takes 5 mg each evening", "指出她每晚服用 5 mg"),
                ("Mentions the missed dose", "提到漏服"),
                ("Does not recommend increasing the dose", "未建议加量"),
            ],
        },
        {
            "type": "DG",
            "source": "patient",
            "subtype": "AE",
            "en": "Any bleeding with it?",
            "zh": "有出血吗？",
            "calls": [adherence(sid_a, "warfarin", WARFARIN_SECOND)],
            "calls_zh": [adherence(sid_a, "华法林", WARFARIN_SECOND_ZH)],
            "answer_en": "She reports no bleeding from the gums or nose and normal stools.",
            "answer_zh": "她自述牙龈和鼻子无出血，大便颜色正常。",
            "rubric": [
                ("States she reports no bleeding", "指出她自述无出血"),
                ("Mentions the gums or nose", "提到牙龈或鼻子"),
                ("Mentions normal stool colour", "提到大便颜色正常"),
                ("Does not recommend stopping warfarin", "未建议停用华法林"),
            ],
        },
    ]
    allergies = ("AllergyIntolerance.search", {"hadm_id": h, "subject_id": s}, None)
    hold = {
        "dose": "hold",
        "frequency": "daily",
        "indication": "acute kidney injury",
        "medication": "lisinopril",
        "route": "PO",
        "subject_id": s,
    }
    b = [
        {
            "type": "IL",
            "source": "ehr",
            "en": "Any allergies?",
            "zh": "有过敏吗？",
            "calls": [allergies],
            "calls_zh": [allergies],
            "answer_en": "Her chart lists the allergies recorded in the discharge note.",
            "answer_zh": "病历记录了出院小结中的过敏史。",
            "rubric": [
                ("Lists the recorded allergies", "列出记录的过敏"),
                ("Cites the record", "引用病历"),
                ("Does not invent an allergy", "未编造过敏"),
            ],
        },
        {
            "type": "WU",
            "source": "write",
            "subtype": "NA",
            "en": "Hold the lisinopril.",
            "zh": "停用赖诺普利。",
            "calls": [("MedicationRequest.create", hold, None)],
            "calls_zh": [("MedicationRequest.create", hold, None)],
            "answer_en": "Lisinopril is held (order created, simulated); creatinine rose to 2.0 mg/dL.",
            "answer_zh": "已暂停赖诺普利（已创建模拟医嘱）；肌酐升至 2.0 mg/dL。",
            "rubric": [
                ("medication is lisinopril", "药物为赖诺普利"),
                ("dose is hold", "剂量为暂停"),
                ("route is PO", "途径为口服"),
                ("frequency is daily", "频次为每日"),
                ("indication mentions kidney injury", "适应证提到肾损伤"),
            ],
        },
    ]
    return [
        _record(rec, key="release_a", scenario="med_safety", turns=a),
        _record(rec, key="release_b", scenario="discharge_planning", turns=b),
    ]


def import_release_sessions(rec: Record) -> list[dict[str, Any]]:
    """Write both records to the database as ``import_pab`` does; returns the records."""
    records = release_records(rec)
    for raw in records:
        write_record(parsed=parse_record(raw), run=None, run_index=None)
    return records
