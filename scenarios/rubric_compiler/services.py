"""Compiling stored rubric items and imported records; the reviewer's decisions are never overwritten.

An item gets a suggestion (``compiled_state = suggested``) only while it has no ``machine_check`` and
no reviewer decision (accepted / edited / removed): those are the reviewer's. ``compiled_version`` marks
every item the compiler ran on, so a second run skips them unless ``force`` or a newer compiler version.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from django.db import transaction
from tqdm import tqdm

from scenarios.models import CompiledState, RubricItem
from scenarios.rubric_compiler.core import attempt
from scenarios.rubric_compiler.report import Coverage
from scenarios.rubric_compiler.types import COMPILER_VERSION, Outcome
from scenarios.suggestions_cache import bump_suggestions_generation

CHUNK = 500  # items written per transaction: an interrupted run keeps whole chunks and resumes after them
DECIDED = (CompiledState.ACCEPTED, CompiledState.EDITED, CompiledState.REMOVED)
if TYPE_CHECKING:
    from scenarios.pab.parsed import ParsedRecord
_EXTENSION_FIELD = "physreview"  # scenarios.pab.layout.EXTENSION_FIELD (not imported: pab imports this module)
# Called once per compiled item with its outcome and the turn's gold: ``(outcome, task_type=, answers=, writes=)``
# (compile_rubrics uses it to judge the gold answer; this app knows nothing of judges).
ItemHook = Callable[..., None]
_FIELDS = (
    "compiled_check",
    "compiled_rule",
    "compiled_version",
    "compiled_confidence",
    "compiled_note",
    "compiled_state",
)


def suggestion_fields(outcome: Outcome) -> dict[str, Any]:
    """The ``compiled_*`` values an outcome gives an undecided item."""
    c = outcome.compiled
    if c is None:
        return dict.fromkeys(_FIELDS[:2], None) | {
            "compiled_rule": "",
            "compiled_version": COMPILER_VERSION,
            "compiled_confidence": None,
            "compiled_note": f"{outcome.reason}: {outcome.explanation}",
            "compiled_state": CompiledState.NONE,
        }
    note = f"{c.explanation} (from {'+'.join(c.languages).upper()})"
    return {
        "compiled_check": c.check,
        "compiled_rule": c.rule,
        "compiled_version": c.version,
        "compiled_confidence": c.confidence,
        "compiled_note": note,
        "compiled_state": CompiledState.SUGGESTED,
    }


def attempt_parsed(*, item: Any, turn: Any) -> Outcome:
    """The compiler's attempt on one rubric item of a parsed record's turn (:mod:`scenarios.pab.schema`)."""
    f = turn.fields
    return attempt(
        text_en=item.text_en,
        text_zh=item.text_zh,
        task_type=f["task_type"],
        gold_steps=turn.steps,
        gold_answers={"en": f.get("answer_en", ""), "zh": f.get("answer_zh", "")},
    )


def compile_parsed(*, parsed: ParsedRecord, raw: Any, coverage: Coverage | None = None) -> None:
    """Give the items of a parsed record their suggestions, in place (before ``write_record``).

    Only turns whose record carries no rubric data of our extension (an official record): our own
    exports already hold their checks and suggestions, restored as exported."""
    ext_turns = ((raw.get(_EXTENSION_FIELD) or {}).get("turns") if isinstance(raw, dict) else None) or []
    for i, turn in enumerate(parsed.turns):
        if i < len(ext_turns) and isinstance(ext_turns[i], dict) and ext_turns[i].get("rubric") is not None:
            continue
        for item in turn.rubric:
            if item.machine_check is not None or item.compiled_state:
                continue
            outcome = attempt_parsed(item=item, turn=turn)
            for name, value in suggestion_fields(outcome).items():
                setattr(item, name, value)
            if coverage is not None:
                coverage.add(task_type=turn.fields["task_type"], outcome=outcome, has_zh=bool(item.text_zh.strip()))


def outcome_of(item: RubricItem) -> Outcome:
    """The compiler's attempt on one stored item (its turn and the turn's steps are read)."""
    return attempt(
        text_en=item.text_en,
        text_zh=item.text_zh,
        task_type=item.turn.task_type,
        gold_steps=list(item.turn.steps.all()),
        gold_answers={"en": item.turn.answer_en, "zh": item.turn.answer_zh},
    )


def _chunks(items: Any, size: int) -> Iterator[list[RubricItem]]:
    batch: list[RubricItem] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _gold(*, answer_en: str, answer_zh: str, steps: Any) -> dict[str, Any]:
    from scenarios.rubric_compiler.core import gold_writes_of

    writes = [{"tool": t, "arguments": a} for t, a in gold_writes_of(steps)]
    return {"answers": {"en": answer_en, "zh": answer_zh}, "writes": writes}


def compile_stored(
    *, items: Any, force: bool = False, dry_run: bool = False, progress: bool = False, hook: ItemHook | None = None
) -> Coverage:
    """Compile ``items`` (a RubricItem queryset) and store the suggestions; returns the coverage.

    Coverage counts every item's wording (items with a machine check or a reviewer decision too);
    storing skips those (``stored``: ``machine check``, ``kept (reviewer decision)``), items already
    compiled by this version unless ``force`` (``unchanged``), and everything when ``dry_run``."""
    coverage = Coverage()
    qs = items.select_related("turn").prefetch_related("turn__steps").order_by("turn__session_id", "turn__index", "idx")
    total = qs.count()
    with tqdm(total=total, desc="rubric items", unit="item", disable=not progress, file=sys.stderr) as bar:
        for batch in _chunks(qs.iterator(chunk_size=CHUNK), CHUNK):
            changed: list[RubricItem] = []
            for item in batch:
                outcome = outcome_of(item)
                coverage.add(task_type=item.turn.task_type, outcome=outcome, has_zh=bool(item.text_zh.strip()))
                if hook is not None and outcome.compiled is not None:
                    t = item.turn
                    hook(
                        outcome,
                        task_type=t.task_type,
                        **_gold(answer_en=t.answer_en, answer_zh=t.answer_zh, steps=t.steps.all()),
                    )
                coverage.stored[_store(item, outcome, force=force, dry_run=dry_run, changed=changed)] += 1
            if changed:
                with transaction.atomic():
                    RubricItem.objects.bulk_update(changed, list(_FIELDS))
                    bump_suggestions_generation()  # committed with the items: every process sees both at once
            bar.update(len(batch))
    return coverage


def _store(item: RubricItem, outcome: Outcome, *, force: bool, dry_run: bool, changed: list[RubricItem]) -> str:
    if item.machine_check is not None:
        return "machine check (not stored)"
    if item.compiled_state in DECIDED:
        return "kept (reviewer decision)"
    if item.compiled_version == COMPILER_VERSION and not force:
        return "unchanged"
    fields = suggestion_fields(outcome)
    if all(getattr(item, k) == v for k, v in fields.items()):
        return "unchanged"
    if dry_run:
        return "would store (dry run)"
    for name, value in fields.items():
        setattr(item, name, value)
    changed.append(item)
    return "stored"


def compile_records(*, records: list[dict[str, Any]], progress: bool = False, hook: ItemHook | None = None) -> Coverage:
    """Coverage of the compiler on PhysAssistBench records (a frozen snapshot: nothing is stored)."""
    from scenarios.pab.schema import parse_record

    coverage = Coverage()
    for raw in tqdm(records, desc="sessions", unit="session", disable=not progress, file=sys.stderr):
        parsed = parse_record(raw)
        for turn in parsed.turns:
            for item in turn.rubric:
                outcome = attempt_parsed(item=item, turn=turn)
                coverage.add(task_type=turn.fields["task_type"], outcome=outcome, has_zh=bool(item.text_zh.strip()))
                if hook is not None and outcome.compiled is not None:
                    f = turn.fields
                    gold = _gold(answer_en=f["answer_en"], answer_zh=f["answer_zh"], steps=turn.steps)
                    hook(outcome, task_type=f["task_type"], **gold)
    return coverage


@transaction.atomic
def compile_turn(*, turn: Any, force: bool = True) -> int:
    """(Re)compile the undecided items of one turn (e.g. after its wording was edited); returns how many changed."""
    changed: list[RubricItem] = []
    for item in RubricItem.objects.select_for_update().filter(turn=turn).select_related("turn"):
        _store(item, outcome_of(item), force=force, dry_run=False, changed=changed)
    RubricItem.objects.bulk_update(changed, list(_FIELDS))
    return len(changed)
