"""Built-in offline baselines: ``rules:oracle``, ``rules:no-tools``, ``rules:heuristic``.

* oracle: makes the gold calls (all in one step, then ``prepare_to_answer``) and gives the gold
  answer. With the rules judge it must score ≈1: if not, the judge or the rubric checks are wrong.
  It calls with the released contract's names, as a model reading the schemas would: gold stored by
  an earlier version (an old snapshot: ``encounter``, ``code`` of a drug, ``status: on-hold``) is
  upgraded first.
* no-tools: answers at once without looking anything up (a lower bound).
* heuristic: routes the request by keywords to a few tools and fills an answer template with
  what came back (a second lower bound that should still beat no-tools).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ehr.fhir.legacy import upgrade_arguments
from evaluation.agents.base import AgentCall, AgentReply, AgentRequest

RULES_AGENTS = ("oracle", "no-tools", "heuristic")


def _call(index: int, name: str, arguments: dict[str, Any]) -> AgentCall:
    raw = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return AgentCall(id=f"call_{index}", name=name, arguments_raw=raw, arguments=json.loads(raw))


def _turn_started(request: AgentRequest) -> bool:
    """Whether this turn already has tool results (the last user message is this turn's request)."""
    for message in reversed(request.messages):
        if message["role"] == "user":
            return False
        if message["role"] == "tool":
            return True
    return False


class OracleAgent:
    name = "rules:oracle"

    def describe(self) -> dict[str, Any]:
        return {"kind": "rules", "name": self.name}

    def respond(self, request: AgentRequest) -> AgentReply:
        gold = request.turn.gold_calls
        if request.stage == "final" or _turn_started(request) or not gold:
            return AgentReply(content=request.turn.answers[request.language] or request.turn.answers["en"])
        calls = [_call(i, s.tool, upgrade_arguments(tool=s.tool, arguments=s.arguments)[0]) for i, s in enumerate(gold)]
        calls.append(_call(len(calls), "prepare_to_answer", {}))
        return AgentReply(content=None, tool_calls=tuple(calls))


NO_TOOLS_ANSWER = {
    "en": "I have not looked anything up in the record. Please check the latest results and orders in the chart.",
    "zh": "我没有查询病历。请在病历中查看最新的检查结果和医嘱。",
}


class NoToolsAgent:
    name = "rules:no-tools"

    def describe(self) -> dict[str, Any]:
        return {"kind": "rules", "name": self.name}

    def respond(self, request: AgentRequest) -> AgentReply:
        return AgentReply(content=NO_TOOLS_ANSWER[request.language])


LABS = {
    "creatinine": ("creatinine", "肌酐"),
    "potassium": ("potassium", "钾"),
    "sodium": ("sodium", "钠"),
    "glucose": ("glucose", "血糖", "葡萄糖"),
    "hemoglobin": ("hemoglobin", "haemoglobin", "血红蛋白"),
    "platelet": ("platelet", "血小板"),
    "inr": ("inr",),
    "white blood cells": ("wbc", "white blood", "白细胞"),
    "magnesium": ("magnesium", "镁"),
    "lactate": ("lactate", "乳酸"),
    "bilirubin": ("bilirubin", "胆红素"),
    "urea nitrogen": ("bun", "urea", "尿素氮"),
}
ROUTES: tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...] = (
    ("MedicationRequest.search", ("order", "dose", "medication", "drug", "医嘱", "剂量", "药"), {}),
    ("Condition.search", ("diagnos", "诊断", "problem"), {}),
    ("AllergyIntolerance.search", ("allerg", "过敏"), {}),
    ("patient.get_medication_adherence", ("at home", "adherence", "taking", "依从", "服药", "在家"), {}),
    ("patient.get_symptom_history", ("symptom", "complain", "症状", "不适"), {}),
    ("patient.get_social_history", ("smok", "alcohol", "drink", "social", "吸烟", "饮酒", "社会"), {}),
)


def route(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Keyword routing of a request to tool calls (at most 4)."""
    low = text.lower()
    calls: list[tuple[str, dict[str, Any]]] = []
    for code, words in LABS.items():
        if any(w in low for w in words):
            calls.append(("Observation.search", {"code": code, "_count": 3}))
    for tool, words, args in ROUTES:
        if any(w in low for w in words):
            calls.append((tool, dict(args)))
    if not calls:
        calls.append(("Observation.search", {"category": "laboratory", "_count": 5}))
    return calls[:4]


def _summarise(resource: dict[str, Any]) -> str | None:
    kind = resource.get("resourceType")
    if kind == "Observation":
        q = resource.get("valueQuantity") or {}
        name = (resource.get("code") or {}).get("text", "")
        value = q.get("value", resource.get("valueString", ""))
        return f"{name} {value} {q.get('unit', '')} ({resource.get('effectiveDateTime', '')})".strip()
    if kind == "MedicationRequest":
        drug = (resource.get("medicationCodeableConcept") or {}).get("text", "")
        dosage = ((resource.get("dosageInstruction") or [{}])[0]).get("text", "")
        return f"{drug} {dosage} ({resource.get('status', '')})"
    if kind in {"Condition", "AllergyIntolerance"}:
        return (resource.get("code") or {}).get("text")
    if kind == "PatientAnswer":
        return f'the patient says: "{resource.get("answer", "")}"'
    if "patient_response" in resource:  # a release-style patient answer
        return f'the patient says: "{resource["patient_response"]}"'
    return None


def summarise_observation(observation: Any, limit: int = 3) -> list[str]:
    if not isinstance(observation, dict) or "error" in observation:
        return []
    if observation.get("resourceType") == "Bundle" or "entry" in observation:
        resources = [e.get("resource") or {} for e in observation.get("entry") or []][:limit]
    else:
        resources = [observation]
    return [s for s in (_summarise(r) for r in resources) if s]


class HeuristicAgent:
    name = "rules:heuristic"

    def describe(self) -> dict[str, Any]:
        return {"kind": "rules", "name": self.name}

    def respond(self, request: AgentRequest) -> AgentReply:
        if request.stage == "step" and not _turn_started(request):
            text = request.messages[-1]["content"]
            calls = [_call(i, tool, args) for i, (tool, args) in enumerate(route(text))]
            calls.append(_call(len(calls), "prepare_to_answer", {}))
            return AgentReply(content=None, tool_calls=tuple(calls))
        found: list[str] = []
        if "observations" in request.extra:  # compact text observations (release): read what the tools returned
            for item in request.extra["observations"]:
                found.extend(summarise_observation(item["observation"]))
        else:
            for message in request.messages:
                if message["role"] != "tool":
                    continue
                try:
                    found.extend(summarise_observation(json.loads(message["content"])))
                except (ValueError, TypeError):
                    continue
        if request.language == "zh":
            body = "；".join(found) if found else "未找到相关数据"
            return AgentReply(content=f"查询结果：{body}。")
        body = "; ".join(found) if found else "no relevant data found"
        return AgentReply(content=f"Here is what I found: {body}.")


_PATTERN = re.compile(r"^rules:(.+)$")


def rules_agent(model: str) -> OracleAgent | NoToolsAgent | HeuristicAgent:
    """The built-in agent named ``rules:NAME``; ``ValueError`` for an unknown name."""
    match = _PATTERN.match(model)
    name = match.group(1) if match else ""
    agents = {"oracle": OracleAgent, "no-tools": NoToolsAgent, "heuristic": HeuristicAgent}
    if name not in agents:
        raise ValueError(f"unknown built-in model {model!r} (expected one of: rules:{', rules:'.join(RULES_AGENTS)})")
    return agents[name]()
