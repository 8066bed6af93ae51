"""Plain values of the generation pipeline (no Django models: persistence is wired elsewhere).

Everything here is JSON-serialisable through ``to_dict`` so that a draft can be compared byte for
byte (determinism tests) and stored as it is by the models layer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCENARIOS = ("diagnostic_workup", "med_safety", "treatment_response", "discharge_planning")
TIERS = (1, 2, 3)
TASK_TYPES = {"IL": "Information Lookup", "DG": "Data Gathering", "CR": "Clinical Reasoning", "WU": "Write/Update"}
SUBTYPES = ("NA", "PE", "AE")
TOOL_SOURCES = ("ehr", "patient", "mixed", "write")
WORKUP_MODES = ("parallel", "adaptive")
# Rubric items per task type (inclusive bounds), from the protocol.
RUBRIC_COUNTS = {"IL": (3, 3), "DG": (4, 5), "CR": (5, 6), "WU": (5, 6)}


@dataclass(frozen=True)
class Focus:
    """What a session is about, fixed by the planner from the record."""

    diagnosis: str
    lab: str  # lab label as charted, e.g. "INR(PT)"
    drug: str | None = None  # drug name as charted, e.g. "Warfarin"
    second_drug: str | None = None  # the other drug of an interaction pair (L3)
    interaction: str | None = None  # key of knowledge.INTERACTIONS
    renal_drug: str | None = None  # a renally dosed drug (Cockcroft-Gault turns)


@dataclass(frozen=True)
class TurnPlan:
    turn: int
    task_type: str  # IL | DG | CR | WU
    kind: str  # which builder makes the turn
    topic: str
    tool_hint: str
    tool_source: str
    subtype: str | None
    workup_mode: str | None
    entity: str  # the main thing the turn is about; NA anaphora must point at an earlier one


def session_id_for(*, scenario: str, seed: int, tier: int, index: int) -> str:
    """A generated session's id: a function of the slot, so the same seed gives the same ids."""
    return f"physreview_{scenario}_s{seed}_t{tier}_{index}"


@dataclass(frozen=True)
class SessionPlan:
    scenario: str
    tier: int
    seed: int
    index: int
    attempt: int
    subject_id: int
    hadm_id: int
    current_date: str
    clinical_task_domain: str
    sequence_idx: int
    tier_feature: str  # foundational | trend | formula | threshold | interaction | sequential
    focus: Focus
    turns: tuple[TurnPlan, ...]
    clinical_situation: str
    investigation_arc: str

    @property
    def session_id(self) -> str:
        return session_id_for(scenario=self.scenario, seed=self.seed, tier=self.tier, index=self.index)

    def plan_text(self) -> dict[str, Any]:
        """The ``session_plan`` object of the released format."""
        return {
            "clinical_situation": self.clinical_situation,
            "investigation_arc": self.investigation_arc,
            "turn_intents": [t.topic for t in self.turns],
            "turns": [
                {
                    "turn": t.turn,
                    "task_type": TASK_TYPES[t.task_type],
                    "topic": t.topic,
                    "tool_hint": t.tool_hint,
                    "tool_source": t.tool_source,
                }
                for t in self.turns
            ],
            "tier_feature": self.tier_feature,
        }


@dataclass
class Step:
    idx: int
    tool: str
    arguments: dict[str, Any]
    observation: Any
    dependency_list: list[int] = field(default_factory=list)


@dataclass
class RubricItem:
    text_en: str
    text_zh: str
    is_safety: bool = False
    check: dict[str, Any] | None = None


@dataclass
class Derivation:
    """A number the answer computes instead of reading: formula, inputs, knowledge constants, result.

    ``constants`` are clinical-knowledge values (a threshold, the 140 of Cockcroft-Gault); they are
    declared here so that a reviewer sees where every number of the answer comes from.
    """

    name: str
    formula: str
    inputs: dict[str, Any]
    constants: dict[str, float]
    result: float | str
    unit: str | None = None


@dataclass
class TurnDraft:
    index: int
    task_type: str
    kind: str
    is_implicit: bool
    subtype: str | None
    tool_source: str
    workup_mode: str | None
    topic: str
    entity: str
    request_explicit_en: str
    request_implicit_en: str
    request_explicit_zh: str
    request_implicit_zh: str
    answer_en: str
    answer_zh: str
    steps: list[Step]
    rubric: list[RubricItem]
    derivations: list[Derivation] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)


@dataclass
class GateFailure:
    gate: str
    turn: int | None
    message: str


@dataclass
class SessionDraft:
    session_id: str
    subject_id: int
    hadm_id: int
    current_date: str
    env_info: str
    scenario: str
    clinical_task_domain: str
    tier: int
    sequence_idx: int
    seed: int
    index: int
    attempt: int
    tier_feature: str
    session_plan: dict[str, Any]
    dep_graph: dict[str, Any]
    turns: list[TurnDraft]
    gate_failures: list[GateFailure] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GenerationOutcome:
    status: str  # passed | rejected_by_gate | no_candidate
    draft: SessionDraft | None
    attempts: int
    reasons: list[GateFailure] = field(default_factory=list)
    # openai backend only: usage totals, prompt versions/hashes, models, audit verdicts (None for rules).
    llm: dict[str, Any] | None = None
    # The failures of every rejected attempt, in attempt order (also those before a passing attempt).
    rejected_attempts: list[list[GateFailure]] = field(default_factory=list)
