"""The editable content of a turn as one JSON snapshot, and the helpers to read, change and write it.

Shape (every key always present in a full snapshot)::

    {
      "request_explicit_en": str, "request_implicit_en": str,
      "request_explicit_zh": str, "request_implicit_zh": str,
      "subtype": "NA" | "PE" | "AE" | None,
      "answer_en": str, "answer_zh": str,
      "rubric": [{"id": int | None, "text_en": str, "text_zh": str, "is_safety": bool, "machine_check": {...} | None,
                  # only on items the rubric compiler made a suggestion for (compiled: read-only)
                  "compiled_state": "suggested" | "accepted" | "edited" | "removed",
                  "compiled": {"check", "rule", "confidence", "note"} | None}],
      "steps": [{"idx": int, "tool": str, "arguments": {...}}],   # only ``arguments`` is editable (contract names)
    }

``rubric[].id`` is the RubricItem row a proposed item derives from (``None`` for a new item); it is how
agreement statistics tell a kept item from a dropped one. ``compiled`` is the rubric compiler's
suggestion (scenarios.rubric_compiler), shown, never written; the reviewer's decision on it is
``compiled_state`` (accept: ``accepted`` and the check copied into ``machine_check``; edit: ``edited``
and the edited check in ``machine_check``; remove: ``removed``), so it is a field of the revision history.
A change set that leaves ``compiled_state`` out keeps the item's current decision.
A *change set* is a partial snapshot: keys it omits keep their current value. :func:`flatten` gives
field-level keys (``rubric.1.text_zh``, ``steps.0.arguments``) used by revisions and diffs.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from annotations.steps import ArgumentsOutsideContract, contract_arguments, rerun_step
from scenarios.gold_answer import write_gold_answer
from scenarios.models import CompiledState, RubricItem, Subtype, Turn
from scenarios.rubric_checks import validate_rubric_check

TEXT_FIELDS = (
    "request_explicit_en",
    "request_implicit_en",
    "request_explicit_zh",
    "request_implicit_zh",
    "answer_en",
    "answer_zh",
)
SCALAR_FIELDS = (*TEXT_FIELDS, "subtype")
ANSWER_FIELDS = ("answer_en", "answer_zh")  # written by scenarios.gold_answer only
KEYS = (*SCALAR_FIELDS, "rubric", "steps")
RUBRIC_KEYS = ("id", "text_en", "text_zh", "is_safety", "machine_check", "compiled_state", "compiled")
# Item attributes a revision records (``compiled`` is the compiler's, read-only).
RUBRIC_FIELDS = ("text_en", "text_zh", "is_safety", "machine_check", "compiled_state")


class InvalidContent(ValueError):
    """A proposed change set is malformed; the message names the field."""


def snapshot(*, turn: Turn) -> dict[str, Any]:
    """The turn's current content (reads rubric items and steps: prefetch them for lists of turns)."""
    return {
        **{name: getattr(turn, name) for name in SCALAR_FIELDS},
        "rubric": [
            {
                "id": r.pk,
                "text_en": r.text_en,
                "text_zh": r.text_zh,
                "is_safety": r.is_safety,
                "machine_check": r.machine_check,
                # Only items the compiler made a suggestion for carry these two keys.
                **({"compiled_state": r.compiled_state, "compiled": _compiled(r)} if r.compiled_state else {}),
            }
            for r in sorted(turn.rubric_items.all(), key=lambda r: r.idx)
        ],
        "steps": [
            {"idx": s.idx, "tool": s.tool, "arguments": s.arguments}
            for s in sorted(turn.steps.all(), key=lambda s: s.idx)
        ],
    }


def _compiled(row: RubricItem) -> dict[str, Any] | None:
    if row.compiled_check is None:
        return None
    return {
        "check": row.compiled_check,
        "rule": row.compiled_rule,
        "confidence": row.compiled_confidence,
        "note": row.compiled_note,
    }


def _rubric_item(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InvalidContent(f"{where}: must be an object")
    if unknown := sorted(set(item) - set(RUBRIC_KEYS)):
        raise InvalidContent(f"{where}: unknown {'key' if len(unknown) == 1 else 'keys'} {', '.join(unknown)}")
    text_en, text_zh = item.get("text_en", ""), item.get("text_zh", "")
    if not isinstance(text_en, str) or not isinstance(text_zh, str) or not text_en.strip():
        raise InvalidContent(f"{where}: text_en (non-empty) and text_zh must be strings")
    if not isinstance(item.get("is_safety", False), bool):
        raise InvalidContent(f"{where}: is_safety must be true or false")
    try:
        validate_rubric_check(item.get("machine_check"))
    except ValueError as exc:
        raise InvalidContent(f"{where}: machine_check {exc}") from None
    item_id = item.get("id")
    if item_id is not None and (isinstance(item_id, bool) or not isinstance(item_id, int)):
        raise InvalidContent(f"{where}: id must be an integer or null")
    state = item.get("compiled_state")
    if state is not None and state not in CompiledState.values:
        raise InvalidContent(
            f"{where}: compiled_state must be one of {', '.join(v for v in CompiledState.values if v)}"
        )
    return {
        "id": item_id,
        "text_en": text_en,
        "text_zh": text_zh,
        "is_safety": item.get("is_safety", False),
        "machine_check": item.get("machine_check"),
        "compiled_state": state,  # None: keep the current decision (resolved against the base)
        "compiled": None,
    }


def _item_name(i: int) -> str:
    """How errors name a rubric item: numbered from 1 as on every screen, plus its array index for API clients."""
    return f"rubric item {i + 1} (rubric[{i}])"


def _resolve_compiled(items: list[dict[str, Any]], base: list[dict[str, Any]]) -> None:
    """Take ``compiled`` from the base item of the same id; a missing decision keeps the base one."""
    by_id = {b.get("id"): b for b in base if b.get("id") is not None}
    for i, item in enumerate(items):
        origin = by_id.get(item["id"]) if item["id"] is not None else None
        item["compiled"] = origin.get("compiled") if origin else None
        if item["compiled_state"] is None:
            item["compiled_state"] = (origin.get("compiled_state") or "") if origin else ""
        if item["compiled_state"] not in ("", CompiledState.REMOVED) and item["compiled"] is None:
            state = item["compiled_state"]
            raise InvalidContent(f"{_item_name(i)}: compiled_state {state!r} needs a compiled suggestion")
        if item["compiled_state"] == "" and item["compiled"] is not None:
            item["compiled_state"] = CompiledState.SUGGESTED
        if not item["compiled_state"]:
            del item["compiled_state"], item["compiled"]  # the shape of an item without a suggestion


def apply_changes(*, base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` laid over it, validated. Raises :class:`InvalidContent`."""
    if not isinstance(changes, dict):
        raise InvalidContent("changes must be an object")
    if unknown := sorted(set(changes) - set(KEYS)):
        raise InvalidContent(f"unknown {'field' if len(unknown) == 1 else 'fields'} {', '.join(unknown)}")
    out = copy.deepcopy(base)
    for name in TEXT_FIELDS:
        if name in changes:
            if not isinstance(changes[name], str):
                raise InvalidContent(f"{name}: must be a string")
            out[name] = changes[name]
    if "subtype" in changes:
        if changes["subtype"] not in (None, *Subtype.values):
            raise InvalidContent(f"subtype: must be one of {', '.join(Subtype.values)} or null")
        out["subtype"] = changes["subtype"]
    if "rubric" in changes:
        if not isinstance(changes["rubric"], list):
            raise InvalidContent("rubric: must be a list")
        out["rubric"] = [_rubric_item(item, _item_name(i)) for i, item in enumerate(changes["rubric"])]
        _resolve_compiled(out["rubric"], base.get("rubric", []))
        ids = [item["id"] for item in out["rubric"] if item["id"] is not None]
        if len(ids) != len(set(ids)):
            raise InvalidContent("rubric: an item id appears twice (copy an item with id null)")
    if "steps" in changes:
        out["steps"] = _steps(base=base["steps"], proposed=changes["steps"])
    return out


def _steps(*, base: list[dict[str, Any]], proposed: Any) -> list[dict[str, Any]]:
    """Only arguments of existing steps may change: tools and the number of steps are fixed. Arguments
    are kept in the tool contract's terms (aliases renamed; names it lacks refused)."""
    if not isinstance(proposed, list):
        raise InvalidContent("steps: must be a list")
    by_idx = {s["idx"]: s for s in base}
    out = copy.deepcopy(base)
    for i, step in enumerate(proposed):
        if not isinstance(step, dict):
            raise InvalidContent(f"steps[{i}]: must be an object with idx and arguments")
        idx = step.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise InvalidContent(f"steps[{i}]: idx must be the integer index of an existing step")
        if idx not in by_idx:
            raise InvalidContent(f"steps[{i}]: unknown step {idx}")
        if "tool" in step and step["tool"] != by_idx[step["idx"]]["tool"]:
            raise InvalidContent(f"steps: step {step['idx']} tool cannot change")
        if not isinstance(step.get("arguments"), dict):
            raise InvalidContent(f"steps: step {step['idx']} arguments must be an object")
        tool = by_idx[step["idx"]]["tool"]
        try:
            arguments = contract_arguments(tool=tool, arguments=step["arguments"])
        except ArgumentsOutsideContract as exc:
            raise InvalidContent(f"steps: step {step['idx']} ({tool}): {exc}") from None
        next(s for s in out if s["idx"] == step["idx"])["arguments"] = arguments
    return out


def changes_between(*, base: dict[str, Any], proposed: dict[str, Any]) -> dict[str, Any]:
    """The top-level keys of ``proposed`` that differ from ``base`` (a change set)."""
    return {k: v for k, v in proposed.items() if base.get(k) != v}


def flatten(content: dict[str, Any]) -> dict[str, Any]:
    """Field-level view: one key per text/flag, per rubric item attribute and per step's arguments."""
    flat: dict[str, Any] = {name: content.get(name) for name in SCALAR_FIELDS}
    for i, item in enumerate(content.get("rubric", [])):
        for key in RUBRIC_FIELDS:
            if key == "compiled_state" and not item.get(key):
                continue  # no suggestion (or a snapshot stored before the compiler existed)
            flat[f"rubric.{i}.{key}"] = item.get(key)
    for step in content.get("steps", []):
        flat[f"steps.{step['idx']}.arguments"] = step.get("arguments")
    return flat


def changed_fields(*, before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(field, before, after)`` for every flattened field that differs (missing on one side = None)."""
    a, b = flatten(before), flatten(after)
    keys = list(a) + [k for k in b if k not in a]
    return [(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)]


_RUBRIC_FIELD = re.compile(r"rubric\.(\d+)\.(text_en|text_zh|is_safety|machine_check|compiled_state)")
_STEP_FIELD = re.compile(r"steps\.(\d+)\.arguments")


def parse_field(field: str, text: str) -> Any:
    """The value of a flattened field typed as text (a merge form): texts as they are, ``subtype``
    empty → None, everything else JSON (empty → None). Raises :class:`InvalidContent` naming the field."""
    text = text.replace("\r\n", "\n")
    if field in TEXT_FIELDS or field.endswith(("text_en", "text_zh")):
        return text
    if field.endswith("compiled_state"):
        return text.strip()
    if field == "subtype":
        return text.strip() or None
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidContent(f"{field}: not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None


def apply_flat(*, base: dict[str, Any], flat: dict[str, Any]) -> dict[str, Any]:
    """``base`` with flattened field values laid over it (how a merge form is read), validated.

    ``rubric.N.*`` past the end of the list appends an item; a rubric item whose English text ends up
    empty is dropped (that is how a removal is merged). Raises :class:`InvalidContent`.
    """
    out = copy.deepcopy(base)
    for field, value in flat.items():
        if field in SCALAR_FIELDS:
            out[field] = value
        elif match := _RUBRIC_FIELD.fullmatch(field):
            index, key = int(match[1]), match[2]
            while len(out["rubric"]) <= index:
                out["rubric"].append(
                    {
                        "id": None,
                        "text_en": "",
                        "text_zh": "",
                        "is_safety": False,
                        "machine_check": None,
                    }
                )
            out["rubric"][index][key] = (bool(value) if key == "is_safety" else value) if value is not None else None
            if key in ("text_en", "text_zh") and value is None:
                out["rubric"][index][key] = ""
        elif match := _STEP_FIELD.fullmatch(field):
            step = next((s for s in out["steps"] if s["idx"] == int(match[1])), None)
            if step is None:
                raise InvalidContent(f"{field}: the turn has no step {match[1]}")
            step["arguments"] = value
        else:
            raise InvalidContent(f"unknown field {field!r}")
    out["rubric"] = [item for item in out["rubric"] if (item.get("text_en") or "").strip()]
    for item in out["rubric"]:
        item["is_safety"] = bool(item.get("is_safety"))
    return apply_changes(base=base, changes=changes_between(base=base, proposed=out))


def write(*, turn: Turn, content: dict[str, Any]) -> None:
    """Store a full, validated snapshot on the turn, its rubric items and step arguments.

    Saves ``turn`` (caller bumps ``version`` first). Rubric items are rewritten in order; an item whose
    ``id`` belongs to this turn keeps its row. A step whose arguments changed is re-executed and its
    observation replaced (EHR reads and simulated writes, see annotations.steps). Call inside a
    transaction holding the turn's row lock.
    """
    for name in SCALAR_FIELDS:
        if name not in ANSWER_FIELDS:
            setattr(turn, name, content[name])
    turn.save()
    existing = {r.pk: r for r in turn.rubric_items.all()}
    keep = {item["id"] for item in content["rubric"] if item["id"] in existing}
    RubricItem.objects.filter(turn=turn).exclude(pk__in=keep).delete()
    # Park kept rows out of the way of the (turn, idx) unique constraint before renumbering.
    for offset, pk in enumerate(sorted(keep)):
        RubricItem.objects.filter(pk=pk).update(idx=10_000 + offset)
    for idx, item in enumerate(content["rubric"]):
        row = existing.get(item["id"]) if item["id"] in keep else None
        row = row or RubricItem(turn=turn)
        row.idx = idx
        row.text_en, row.text_zh = item["text_en"], item["text_zh"]
        row.is_safety, row.machine_check = item["is_safety"], item["machine_check"]
        # The suggestion stays the compiler's; the row takes the reviewer's decision on it (none without one).
        state = item.get("compiled_state") or ""
        row.compiled_state = state if row.compiled_check is not None or state == CompiledState.REMOVED else ""
        row.save()  # validates machine_check
    for step in turn.steps.all():
        new = next((s["arguments"] for s in content["steps"] if s["idx"] == step.idx), step.arguments)
        if new != step.arguments:
            step.arguments = new
            observation = rerun_step(session=turn.session, tool=step.tool, arguments=new)
            if observation is not None:
                step.observation = observation
            step.save(update_fields=["arguments", "observation"])
    # Last, so no re-executed step overwrites it: the answer and its prepare_to_answer observations are
    # written together, in one place.
    write_gold_answer(turn=turn, answer_en=content["answer_en"], answer_zh=content["answer_zh"])
