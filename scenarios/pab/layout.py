"""The PhysAssistBench record's layout: its fields in the release's order, which are per turn, integer or
aliased, the task-type labels and persona values it allows, and PhysReview's extension field
(``shared/formats/physassistbench-session.md``). Constants only: parsing is :mod:`scenarios.pab.schema`,
writing :mod:`scenarios.pab.writer`."""

from __future__ import annotations

from scenarios import gold_answer
from scenarios.models import TaskType

# Per-turn lists that stand together in FIELD_ORDER (rubrics, also per turn, come after the plan).
_PER_TURN_LISTS = (
    "tasks",
    "tasks_en",
    "tasks_explicit",
    "tasks_en_explicit",
    "tasks_zh",
    "tasks_zh_explicit",
    "messages",
    "messages_en",
    "messages_zh",
    "answer_list",
    "answer_list_zh",
    "turn_types",
    "task_types",
    "task_sequence",
    "turn_subtypes",
    "tool_sources",
    "workup_modes",
)
FIELD_ORDER = (
    "id",
    "session_id",
    "subject_id",
    "hadm_id",
    "current_date",
    "env_info",
    "clinical_scenario",
    "clinical_task_domain",
    "difficulty_level",
    "tool_set",
    "sequence_idx",
    "tools",
    "tools_en",
    "tools_zh",
    *_PER_TURN_LISTS,
    "dep_graph",
    "session_plan",
    "rubrics",
    "rubrics_zh",
    "persona_config",
    "patient_agent_annotations",
    "generated_at",
)
# Fields holding one entry per turn (in FIELD_ORDER's order): snapshot diffs compare them turn by turn.
# answer_list_zh is left out: the diff's turn fields do not include it, so as a session field its
# changes are at least reported.
PER_TURN_FIELDS = (*(f for f in _PER_TURN_LISTS if f != "answer_list_zh"), "rubrics", "rubrics_zh")
EXTENSION_FIELD = "physreview"
EXTENSION_FORMAT = 1
KNOWN_FIELDS = frozenset({*FIELD_ORDER, EXTENSION_FIELD})  # anything else goes to Session.extra
# Top-level integers (field → Session column) kept as spelled when written as integral numbers
# (the release writes 22444183.0).
INTEGER_FIELDS = {
    "subject_id": "subject_id",
    "hadm_id": "hadm_id",
    "difficulty_level": "tier",
    "sequence_idx": "sequence_idx",
}
# Turn.extra key of the turn's answer_list_zh entry (its raw steps, exported back as imported).
ANSWER_LIST_ZH = gold_answer.ANSWER_LIST_ZH
# English duplicates: alias → primary. The primary is stored; a differing alias is kept verbatim.
ALIASES = {
    "tools_en": "tools",
    "tasks_en": "tasks",
    "tasks_en_explicit": "tasks_explicit",
    "messages_en": "messages",
    "task_sequence": "task_types",
}
TASK_TYPE_LABELS = {c.label: c.value for c in TaskType}  # "Information Lookup" → "IL"
PERSONA_VALUES = {
    "health_literacy": ("low", "medium", "high"),
    "adherence": ("good", "partial", "poor"),
    "anxiety_level": ("low", "medium", "high"),
    "info_completeness": ("full", "partial", "critical_withheld"),
}
MAX_LENGTHS = {"id": 200, "session_id": 200, "clinical_task_domain": 100, "tool_set": 32}
