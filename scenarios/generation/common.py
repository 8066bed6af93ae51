"""Shared pieces of the turn builders: the per-turn context, the step runner, reading observations."""

from __future__ import annotations

import datetime as dt
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ehr.fhir import REGISTRY, ToolContext, execute_tool
from ehr.fhir.errors import ToolError
from scenarios.generation.lang import lab_name, zh
from scenarios.generation.types import Derivation, RubricItem, SessionPlan, Step, TurnDraft, TurnPlan
from scenarios.patient.answers import CHINESE_TEXT_KEYS

PatientAnswer = Callable[..., dict[str, Any]]


def fmt(value: float | int | None) -> str:
    """A number as the record shows it (1.6, 78.2, 5): no float noise, no trailing zeros."""
    if value is None:
        return "?"
    if float(value).is_integer():
        return str(int(value))
    return f"{float(value):.4f}".rstrip("0").rstrip(".")


def when(stamp: str | None) -> str:
    """'2173-10-18 05:49:00' → '2173-10-18 05:49' (date and clock time as charted)."""
    return (stamp or "")[:16]


@dataclass
class LabPoint:
    label: str
    value: float | None
    unit: str
    time: str
    low: float | None
    high: float | None

    @property
    def status(self) -> str:
        if self.value is None:
            return "normal"
        if self.high is not None and self.value > self.high:
            return "high"
        if self.low is not None and self.value < self.low:
            return "low"
        return "normal"

    def range_text(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{fmt(self.low)}–{fmt(self.high)} {self.unit}".strip()
        return ""


@dataclass
class MedOrder:
    rid: str
    drug: str
    dosage: str
    authored: str
    status: str
    dose_value: float | None
    dose_unit: str
    route: str = ""
    per_day: float | None = None  # administrations per 24 h as ordered

    @property
    def frequency(self) -> str:
        """The order's frequency in words ('twice daily'), as MedicationRequest.create takes it."""
        if self.per_day is None:
            return AS_ORDERED
        return FREQUENCY_WORDS.get(self.per_day, f"{fmt(self.per_day)} times daily")


FREQUENCY_WORDS = {1: "once daily", 2: "twice daily", 3: "three times daily", 4: "four times daily"}
# Route/frequency are required by MedicationRequest.create; this stands in when the fetched order does not say.
AS_ORDERED = "as ordered"


def resources(bundle: Any) -> list[dict[str, Any]]:
    if not isinstance(bundle, dict) or "entry" not in bundle:
        return []
    return [e["resource"] for e in bundle["entry"]]


def lab_points(bundle: Any) -> list[LabPoint]:
    """Numeric observations of a Bundle, newest first (as the tool returns them)."""
    out = []
    for r in resources(bundle):
        q = r.get("valueQuantity")
        if not q:
            continue
        rng = (r.get("referenceRange") or [{}])[0]
        out.append(
            LabPoint(
                label=r["code"]["text"],
                value=q.get("value"),
                unit=q.get("unit") or "",
                time=r.get("effectiveDateTime") or "",
                low=(rng.get("low") or {}).get("value"),
                high=(rng.get("high") or {}).get("value"),
            )
        )
    return out


def med_orders(bundle: Any) -> list[MedOrder]:
    out = []
    for r in resources(bundle):
        dosage = (r.get("dosageInstruction") or [{}])[0]
        dose = ((dosage.get("doseAndRate") or [{}])[0]).get("doseQuantity") or {}
        out.append(
            MedOrder(
                rid=r["id"],
                drug=r["medicationCodeableConcept"]["text"],
                dosage=dosage.get("text", ""),
                authored=r.get("authoredOn") or "",
                status=r.get("status", ""),
                dose_value=dose.get("value"),
                dose_unit=dose.get("unit") or "",
                route=(dosage.get("route") or {}).get("text") or "",
                per_day=((dosage.get("timing") or {}).get("repeat") or {}).get("frequency"),
            )
        )
    return out


def contract_arguments(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A gold call's arguments in the contract's parameter order (stored and exported as written).

    Gold calls must run in the official tooling, which knows no alias: a name outside the released
    contract is a builder bug, not something to let the tool layer map or drop.
    """
    params = [p.name for p in REGISTRY[tool].params]
    if unknown := sorted(set(arguments) - set(params)):
        raise ValueError(f"gold call {tool} uses argument(s) outside the contract: {', '.join(unknown)}")
    return {name: arguments[name] for name in params if name in arguments}


def patient_text(answer: dict[str, Any], *, language: str) -> str:
    """The spoken part of a patient-tool answer, whatever shape the patient module returns."""
    keys = CHINESE_TEXT_KEYS if language == "zh" else ()
    for key in (*keys, "answer_en", "answer", "text", "content"):
        if isinstance(answer.get(key), str) and answer[key].strip():
            return answer[key].strip()
    return json.dumps(answer, ensure_ascii=False, sort_keys=True)


def with_chinese(observation: dict[str, Any], zh_text: str) -> dict[str, Any]:
    """A copy of a patient answer with ``answer_zh`` (the Chinese answer to the same question) after ``answer``."""
    out: dict[str, Any] = {}
    for key, value in observation.items():
        out[key] = value
        if key == "answer":
            out["answer_zh"] = zh_text
    out.setdefault("answer_zh", zh_text)
    return out


@dataclass
class TurnContext:
    plan: SessionPlan
    turn: TurnPlan
    tool_context: ToolContext
    patient_answer: PatientAnswer
    earlier: list[TurnDraft]
    age: int
    sex: str
    steps: list[Step] = field(default_factory=list)

    @property
    def subject(self) -> int:
        return self.plan.subject_id

    @property
    def today(self) -> dt.date:
        return self.tool_context.current_date

    def call(self, tool: str, arguments: dict[str, Any], *, deps: list[int] | None = None) -> Any:
        """Run one gold call at the session's cutoff and record it as a step (contract names only)."""
        if REGISTRY[tool].kind == "patient":
            args = contract_arguments(
                tool, {"subject_id": self.subject, "session_id": self.plan.session_id, **arguments}
            )
            observation = self._ask_patient(tool, args)
            answered = isinstance(observation, dict) and "error" not in observation
            if answered and not any(isinstance(observation.get(k), str) for k in CHINESE_TEXT_KEYS):
                # A one-language patient: ask the same question in Chinese. The gold keeps both texts so
                # that a Chinese run replays the patient in Chinese (evaluation.replay).
                zh_obs = self._ask_patient(tool, {**args, "language": "zh"})
                if isinstance(zh_obs, dict) and "error" not in zh_obs:
                    observation = with_chinese(observation, patient_text(zh_obs, language="en"))
        else:
            args = contract_arguments(tool, {"subject_id": self.subject, **arguments})
            observation = execute_tool(name=tool, arguments=args, context=self.tool_context)
        self.steps.append(
            Step(
                idx=len(self.steps),
                tool=tool,
                arguments=args,
                observation=observation,
                dependency_list=list(deps or []),
            )
        )
        return observation

    def _ask_patient(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        # The brief's ``patient_answer(tool=, arguments=)``, or an EHR-style responder that also wants ``context``.
        try:
            if "context" in inspect.signature(self.patient_answer).parameters:
                return self.patient_answer(tool=tool, arguments=dict(args), context=self.tool_context)
            return self.patient_answer(tool=tool, arguments=dict(args))
        except ToolError as exc:
            return exc.as_dict()

    def names(self) -> dict[str, str]:
        """Placeholders for the request templates, EN and ZH."""
        f = self.plan.focus
        out = {"date": self.plan.current_date, "hadm": str(self.plan.hadm_id)}
        for key, value, kind in (
            ("lab", lab_name(f.lab), "lab"),
            ("drug", (f.drug or "").lower(), "drug"),
            ("drug2", (f.second_drug or "").lower(), "drug"),
            ("renal", (f.renal_drug or "").lower(), "drug"),
            ("dx", f.diagnosis, "diagnosis"),
        ):
            source = {"lab": f.lab, "drug": f.drug, "drug2": f.second_drug, "renal": f.renal_drug}.get(key, value)
            out[key] = value
            out[key.capitalize()] = value[:1].upper() + value[1:]
            out[f"{key}_zh"] = zh(source or "", kind=kind) if source else ""
        return out


def item(en: str, zh_text: str, check: dict[str, Any] | None = None, *, safety: bool = False) -> RubricItem:
    return RubricItem(text_en=en, text_zh=zh_text, is_safety=safety, check=check)


def value_check(value: float | None, unit: str) -> dict[str, Any] | None:
    """A value+unit check, or None (judged by reading) when the record has no numeric value."""
    if value is None:
        return None
    return {"kind": "value_unit", "value": value, "unit": unit, "tolerance": 0.05}


def term_check(en: list[str], zh_terms: list[str]) -> dict[str, Any]:
    return {"kind": "term", "en": en, "zh": zh_terms}


@dataclass
class Built:
    """What a kind builder returns (requests come from the templates)."""

    answer_en: str
    answer_zh: str
    rubric: list[RubricItem]
    derivations: list[Derivation] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
