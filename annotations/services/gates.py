"""Re-run the generation quality gates that apply to a single edited turn.

The gates work on a :class:`SessionDraft`; we rebuild one from the stored session with the edited
turn's proposed content in place, run the per-turn gates and keep the failures of that turn.
Session-level gates (arc, tier) are not re-run: a reviewer's edit of one turn cannot be judged by them.
Entities are not stored with a turn, so the NA "refers to something established earlier" check is
neutralised; the NA pronoun, PE and AE form checks still run. A step whose arguments were edited is
re-executed (annotations.steps) so the tool-result, numbers and date gates see its new observation.
"""

from __future__ import annotations

from typing import Any

from annotations.steps import rerun_step
from scenarios.audit import evidence
from scenarios.gate_messages import gate_message, where
from scenarios.generation import gates
from scenarios.generation.gates_content import CONTENT_GATES
from scenarios.generation.types import Derivation, RubricItem, SessionDraft, Step, TurnDraft
from scenarios.models import GoldStep, Turn

TURN_GATES = (
    gates.gate_tool_results,
    gates.gate_tool_counts,
    gates.gate_numbers,
    gates.gate_rubric,
    gates.gate_translation,
    gates.gate_arc,  # only its per-turn subtype/source failures are kept (turn is not None)
    gates.gate_date_cutoff,
    *CONTENT_GATES,  # placeholders, untranslated English, machine strings, an answer failing its own rubric
)


def _derivation(d: dict[str, Any]) -> Derivation:
    return Derivation(
        name=d.get("name", ""),
        formula=d.get("formula", ""),
        inputs=d.get("inputs", {}),
        constants=d.get("constants", {}),
        result=d.get("result", ""),
        unit=d.get("unit"),
    )


def _observation(turn: Turn, step: Any, arguments: dict[str, Any]) -> Any:
    if arguments == step.arguments:
        return step.observation
    rerun = rerun_step(session=turn.session, tool=step.tool, arguments=arguments)
    return step.observation if rerun is None else rerun


def _turn_draft(turn: Turn, content: dict[str, Any]) -> TurnDraft:
    steps = {s.idx: s for s in turn.steps.all()}
    args = {s["idx"]: s["arguments"] for s in content["steps"]}
    return TurnDraft(
        index=turn.index,
        task_type=turn.task_type,
        kind="",
        is_implicit=turn.is_implicit,
        subtype=content["subtype"],
        tool_source=turn.tool_source,
        workup_mode=turn.workup_mode,
        topic="",
        entity="",
        entities=[""],
        request_explicit_en=content["request_explicit_en"],
        request_implicit_en=content["request_implicit_en"],
        request_explicit_zh=content["request_explicit_zh"],
        request_implicit_zh=content["request_implicit_zh"],
        answer_en=content["answer_en"],
        answer_zh=content["answer_zh"],
        steps=[
            Step(
                idx=s.idx,
                tool=s.tool,
                arguments=args.get(s.idx, s.arguments),
                observation=_observation(turn, s, args.get(s.idx, s.arguments)),
                dependency_list=list(s.dependency_list or []),
            )
            for s in sorted(steps.values(), key=lambda s: s.idx)
        ],
        rubric=[
            RubricItem(text_en=r["text_en"], text_zh=r["text_zh"], is_safety=r["is_safety"], check=r["machine_check"])
            for r in content["rubric"]
        ],
        derivations=[_derivation(d) for d in turn.derivations or [] if isinstance(d, dict)],
    )


# Fields of the other turns the edited turn's failures depend on: the number-grounding pool of turn
# k reads the requests, calls and derivations of the turns before it (by list position); the arc
# gate's per-turn checks only need earlier turns to exist. Answers and rubric stay in the database.
OTHER_FIELDS = (
    "id",
    "index",
    "task_type",
    "is_implicit",
    "subtype",
    "tool_source",
    "workup_mode",
    "request_explicit_en",
    "request_implicit_en",
    "request_explicit_zh",
    "request_implicit_zh",
    "derivations",
)


def _other_drafts(turn: Turn) -> list[TurnDraft]:
    """Light drafts of the turns the gates of ``turn`` can see: those before ``turn.index + 1`` positions.

    Equivalent to the full session for the failures of ``turn`` (every per-turn gate yields failures
    for the turn it iterates; only ``gate_numbers`` reads other turns, through ``turns[: index + 1]``).
    """
    rows = list(turn.session.turns.exclude(pk=turn.pk).order_by("index").values(*OTHER_FIELDS))
    position = sum(1 for r in rows if r["index"] < turn.index)
    rows = rows[: max(turn.index, position)]  # with `turn` at `position`, positions 0..turn.index are kept
    steps: dict[int, list[Step]] = {r["id"]: [] for r in rows}
    calls = GoldStep.objects.filter(turn_id__in=list(steps)).order_by("turn_id", "idx")
    for turn_id, idx, tool, arguments, observation, dependency_list in calls.values_list(
        "turn_id", "idx", "tool", "arguments", "observation", "dependency_list"
    ):
        steps[turn_id].append(Step(idx, tool, arguments, observation, list(dependency_list or [])))
    return [
        TurnDraft(
            index=r["index"],
            task_type=r["task_type"],
            kind="",
            is_implicit=r["is_implicit"],
            subtype=r["subtype"],
            tool_source=r["tool_source"],
            workup_mode=r["workup_mode"],
            topic="",
            entity="",
            entities=[""],
            request_explicit_en=r["request_explicit_en"],
            request_implicit_en=r["request_implicit_en"],
            request_explicit_zh=r["request_explicit_zh"],
            request_implicit_zh=r["request_implicit_zh"],
            answer_en="",
            answer_zh="",
            steps=steps[r["id"]],
            rubric=[],
            derivations=[_derivation(d) for d in r["derivations"] or [] if isinstance(d, dict)],
        )
        for r in rows
    ]


def session_draft(*, session: Any, turns: list) -> SessionDraft:
    """The generation pipeline's view of a stored session with these turn drafts (what the gates read)."""
    return SessionDraft(
        session_id=session.session_id,
        subject_id=session.subject_id,
        hadm_id=session.hadm_id,
        current_date=session.current_date.isoformat(),
        env_info=session.env_info,
        scenario=session.scenario,
        clinical_task_domain=session.clinical_task_domain,
        tier=session.tier,
        sequence_idx=session.sequence_idx,
        seed=0,
        index=0,
        attempt=0,
        tier_feature="",
        session_plan=session.session_plan,
        dep_graph=session.dep_graph,
        turns=turns,
    )


def turn_warnings(
    *, turn: Turn, content: dict[str, Any], previous: dict[int, Any] | None = None
) -> list[dict[str, Any]]:
    """Gate failures of ``turn`` if it had ``content`` (a full snapshot): ``[{"gate", "message"}]``.

    ``previous``: the steps' observations before a save that already re-executed them (``{idx: obs}``),
    so the evidence gate can name the step whose result changed; by default the stored observations."""
    drafts = _other_drafts(turn)
    mine = _turn_draft(turn, content)
    drafts.append(mine)
    draft = session_draft(session=turn.session, turns=sorted(drafts, key=lambda t: t.index))
    out = [{"gate": f.gate, "message": f.message} for gate in TURN_GATES for f in gate(draft) if f.turn == turn.index]
    earlier = [d for d in drafts if d is not mine and d.index < turn.index]
    return out + evidence_warnings(turn=turn, content=content, mine=mine, earlier=earlier, previous=previous)


def evidence_warnings(
    *, turn: Turn, content: dict[str, Any], mine: TurnDraft, earlier: list[TurnDraft], previous: dict[int, Any] | None
) -> list[dict[str, Any]]:
    """The answer ↔ evidence gate (scenarios.audit.evidence) on the answer (EN, ZH) and value rubric items."""
    before = previous if previous is not None else {s.idx: s.observation for s in turn.steps.all()}
    steps = [
        evidence.EvidenceStep(
            s.idx, s.tool, s.arguments, s.observation, before.get(s.idx) if before.get(s.idx) != s.observation else None
        )
        for s in mine.steps
    ]
    texts: list[tuple[str, int | None, str]] = [
        ("answer", None, content["answer_en"]),
        ("answer_zh", None, content["answer_zh"]),
    ]
    texts += [
        ("rubric", i + 1, r["text_en"])
        for i, r in enumerate(content["rubric"])
        if isinstance(r.get("machine_check"), dict) and r["machine_check"].get("kind") == "value_unit"
    ]
    findings = evidence.check(
        texts=texts,
        steps=steps,
        earlier_steps=[
            evidence.EvidenceStep(s.idx, s.tool, s.arguments, s.observation) for d in earlier for s in d.steps
        ],
        derivations=turn.derivations,
        context_texts=[turn.session.env_info, content["request_explicit_en"], content["request_implicit_en"]],
    )
    out = []
    for f in findings:
        field = where(f.where, n=f.n) if f.n is not None else where(f.where)
        message = gate_message(f.kind, where=field, value=f.value, idx=f.step, tool=f.tool, name=f.name)
        if (item := {"gate": "evidence", "message": message}) not in out:
            out.append(item)
    return out
