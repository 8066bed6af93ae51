"""The one place a turn's gold answer is written.

The released records store a turn's gold answer twice: as the assistant message of the gold
conversation and as the observation of the turn's last step, ``prepare_to_answer`` (the release's
judge and rubric generator read the latter). Both must always say the same thing, in both languages:

* English: ``Turn.answer_en`` and the observation of the turn's ``prepare_to_answer`` :class:`GoldStep` row;
* Chinese: ``Turn.answer_zh`` and, when the turn carries the Chinese run's steps (an imported
  ``answer_list_zh`` entry in ``Turn.extra``), the observation of their ``prepare_to_answer`` step. A
  turn without them has no stored Chinese observation: the export derives it from ``answer_zh``
  (:func:`zh_steps_for_export`), so there is nothing that could drift.

Every writer (generation, import, review edits, adjudication, migrations) goes through
:func:`apply_gold_answer` / :func:`write_gold_answer`; :func:`answer_mismatches` is what a snapshot
checks before freezing. The answer is the source of truth: the observation follows it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from scenarios.models import GoldStep, Turn

PREPARE = "prepare_to_answer"
# Turn.extra key of the imported answer_list_zh entry (same value as scenarios.pab.layout.ANSWER_LIST_ZH,
# repeated here because scenarios.pab imports this module).
ANSWER_LIST_ZH = "pab_answer_list_zh"


def _prepare_step(steps: Iterable[Any]) -> Any | None:
    """The closing ``prepare_to_answer`` step (the last one), or None."""
    ordered = sorted(steps, key=lambda s: s.idx)
    return ordered[-1] if ordered and ordered[-1].tool == PREPARE else None


def _zh_prepare(raw: Any) -> dict[str, Any] | None:
    """The closing ``prepare_to_answer`` step dict of a stored ``answer_list_zh`` entry, or None."""
    if not isinstance(raw, list) or not raw or not isinstance(raw[-1], dict):
        return None
    action = raw[-1].get("action")
    return raw[-1] if isinstance(action, dict) and action.get("name") == PREPARE else None


def apply_gold_answer(*, turn: Turn, steps: Iterable[GoldStep], answer_en: str, answer_zh: str) -> list[str]:
    """Set the answer on ``turn`` and on its ``prepare_to_answer`` observations (``steps``: the turn's
    step objects, saved or not; the Chinese steps in ``turn.extra``), without saving anything. Returns
    the names of what changed (``answer_en``, ``answer_zh``, ``steps.N.observation``,
    ``answer_list_zh.observation``) so the caller saves exactly that."""
    changed: list[str] = []
    if turn.answer_en != answer_en:
        turn.answer_en = answer_en
        changed.append("answer_en")
    if turn.answer_zh != answer_zh:
        turn.answer_zh = answer_zh
        changed.append("answer_zh")
    step = _prepare_step(steps)
    if step is not None and step.observation != answer_en:
        step.observation = answer_en
        changed.append(f"steps.{step.idx}.observation")
    raw = (turn.extra or {}).get(ANSWER_LIST_ZH)
    zh_step = _zh_prepare(raw)
    if zh_step is not None and zh_step.get("observation") != answer_zh:
        raw = copy.deepcopy(raw)
        raw[-1]["observation"] = answer_zh
        turn.extra = {**turn.extra, ANSWER_LIST_ZH: raw}
        changed.append("answer_list_zh.observation")
    return changed


def write_gold_answer(*, turn: Turn, answer_en: str, answer_zh: str) -> list[tuple[str, Any, Any]]:
    """Write the answer of a saved turn and its ``prepare_to_answer`` observations together; returns
    ``(field, before, after)`` for what changed (a revision's shape). Call inside the transaction
    that holds the turn's row lock."""
    steps = list(turn.steps.all())
    before = _observed(turn=turn, steps=steps)
    changed = apply_gold_answer(turn=turn, steps=steps, answer_en=answer_en, answer_zh=answer_zh)
    if not changed:
        return []
    fields = [f for f in ("answer_en", "answer_zh") if f in changed]
    if "answer_list_zh.observation" in changed:
        fields.append("extra")
    if fields:
        turn.save(update_fields=fields)
    step = _prepare_step(steps)
    if step is not None and f"steps.{step.idx}.observation" in changed:
        step.save(update_fields=["observation"])
    after = _observed(turn=turn, steps=steps)
    return [(name, before.get(name), after.get(name)) for name in changed]


def _observed(*, turn: Turn, steps: list[GoldStep]) -> dict[str, Any]:
    out: dict[str, Any] = {"answer_en": turn.answer_en, "answer_zh": turn.answer_zh}
    if (step := _prepare_step(steps)) is not None:
        out[f"steps.{step.idx}.observation"] = step.observation
    if (zh := _zh_prepare((turn.extra or {}).get(ANSWER_LIST_ZH))) is not None:
        out["answer_list_zh.observation"] = zh.get("observation")
    return out


def answer_mismatches(*, turn: Turn) -> list[str]:
    """How ``turn`` breaks the invariant, in words ([] when it holds). Uses ``turn.steps.all()``
    (prefetch it for many turns)."""
    problems: list[str] = []
    step = _prepare_step(turn.steps.all())
    if step is None:
        problems.append("its last gold step is not prepare_to_answer")
    elif step.observation != turn.answer_en:
        problems.append("the English answer differs from the prepare_to_answer observation")
    raw = (turn.extra or {}).get(ANSWER_LIST_ZH)
    if raw is not None:
        zh = _zh_prepare(raw)
        if zh is None:
            problems.append("its Chinese steps do not end with prepare_to_answer")
        elif zh.get("observation") != turn.answer_zh:
            problems.append("the Chinese answer differs from the Chinese prepare_to_answer observation")
    return problems


def zh_steps_for_export(*, turn: Turn, en_steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn's ``answer_list_zh`` entry: the stored Chinese steps, else the English ones with the
    Chinese answer as the ``prepare_to_answer`` observation."""
    stored = (turn.extra or {}).get(ANSWER_LIST_ZH)
    if stored is not None:
        return stored
    out = copy.deepcopy(en_steps)
    if out and isinstance(out[-1], dict) and (out[-1].get("action") or {}).get("name") == PREPARE:
        out[-1]["observation"] = turn.answer_zh
    return out
