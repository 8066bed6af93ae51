"""Reading the editor form: only the fields the user changed become a change set.

Every input carries a hidden twin with the value the page showed (``orig-<name>``). A field whose
posted value equals its original is left out, so two tabs editing different fields of one draft do
not overwrite each other (the services lay a change set over the latest stored content). Rubric
rows are matched to the stored items by ``rubric-N-key`` (the item id, or ``nK`` for an item added
in a draft at position K) and only their changed attributes are applied; new rows are appended.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import QueryDict
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotations import content as tc
from annotations.steps import contract_view, rerunnable
from scenarios.models import Subtype

_ROW = re.compile(r"rubric-(\d+)-key")
_NEW = re.compile(r"rubric-new-(\d+)-text_en")


def _norm(text: str) -> str:
    return text.replace("\r\n", "\n")


def _changed(post: QueryDict, name: str) -> str | None:
    """The posted value of ``name`` if the user changed it (no original posted = changed), else None."""
    if name not in post:
        return None
    value, original = _norm(post[name]), post.get(f"orig-{name}")
    if original is not None and _norm(original) == value:
        return None
    return value


def _item_key(item: dict[str, Any], position: int) -> str:
    return str(item["id"]) if item.get("id") is not None else f"n{position}"


def _rubric(post: QueryDict, start: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    items = [dict(item) for item in start]
    by_key = {_item_key(item, i): item for i, item in enumerate(items)}
    removed: set[int] = set()
    rows = sorted({int(m[1]) for key in post if (m := _ROW.fullmatch(key))})
    if not rows:  # an older form without keys: rows are positions in the stored list
        rows = sorted({int(m[1]) for key in post if (m := re.fullmatch(r"rubric-(\d+)-text_(en|zh)", key))})
    changed = False
    for row in rows:
        key = post.get(f"rubric-{row}-key", _item_key(items[row], row) if row < len(items) else "")
        item = by_key.get(key)
        if item is None:
            continue  # removed meanwhile (another tab): nothing to apply it to
        for attr in ("text_en", "text_zh"):
            value = _changed(post, f"rubric-{row}-{attr}")
            if value is not None and value != item[attr]:
                item[attr], changed = value, True
        if f"rubric-{row}-orig-is_safety" in post:
            safety = post.get(f"rubric-{row}-is_safety") == "1"
            if safety != (post[f"rubric-{row}-orig-is_safety"] == "1") and safety != item["is_safety"]:
                item["is_safety"], changed = safety, True
        changed = _compiled_decision(post, row, item) or changed
        if post.get(f"rubric-{row}-remove") == "1":
            removed.add(id(item))
            changed = True
    out = [item for item in items if id(item) not in removed]
    for row in sorted({int(m[1]) for key in post if (m := _NEW.fullmatch(key))}):
        text_en = _norm(post.get(f"rubric-new-{row}-text_en", "")).strip()
        text_zh = _norm(post.get(f"rubric-new-{row}-text_zh", "")).strip()
        if not text_en and not text_zh:
            continue  # the blank row nobody filled in
        if not text_en:
            raise tc.InvalidContent(
                _("new rubric item: the English text is required (Chinese: %(zh)s)") % {"zh": text_zh}
            )
        safety = post.get(f"rubric-new-{row}-is_safety") == "1"
        # New items have no machine check: only generated items carry one.
        out.append({"id": None, "text_en": text_en, "text_zh": text_zh, "is_safety": safety, "machine_check": None})
        changed = True
    return out if changed else None


def _compiled_decision(post: QueryDict, row: int, item: dict[str, Any]) -> bool:
    """The reviewer's decision on the compiler's suggestion for one row: accept (the check becomes the
    item's machine check), edit (the edited JSON does), remove, or restore a removed one. True if changed."""
    compiled = item.get("compiled")
    if not compiled:
        return False
    edited = _changed(post, f"rubric-{row}-compiled_json")
    action = post.get(f"rubric-{row}-compiled", "")
    if edited is not None and edited.strip():
        try:
            check = json.loads(edited)
        except json.JSONDecodeError as exc:
            raise tc.InvalidContent(
                _("rubric item %(n)s: the edited check is not valid JSON (%(msg)s)") % {"n": row + 1, "msg": exc.msg}
            ) from None
        item["machine_check"], item["compiled_state"] = check, "edited"
        return True
    if action == "accept":
        item["machine_check"], item["compiled_state"] = compiled["check"], "accepted"
    elif action == "remove":
        item["compiled_state"] = "removed"
        if item.get("machine_check") == compiled["check"]:
            item["machine_check"] = None  # taking back an accepted suggestion
    elif action == "restore":
        item["compiled_state"] = "suggested"
    else:
        return False
    return True


def _steps(post: QueryDict, start: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for step in start:
        text = _changed(post, f"step-{step['idx']}-arguments")
        if text is None:
            continue
        where = _("step %(idx)s (%(tool)s)") % {"idx": step["idx"], "tool": step["tool"]}
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError as exc:
            raise tc.InvalidContent(
                _("%(where)s: arguments are not valid JSON (%(msg)s, line %(line)s column %(col)s)")
                % {"where": where, "msg": exc.msg, "line": exc.lineno, "col": exc.colno}
            ) from None
        if not isinstance(arguments, dict):
            raise tc.InvalidContent(_("%(where)s: arguments must be a JSON object") % {"where": where})
        if arguments != step["arguments"]:
            out.append({"idx": step["idx"], "arguments": arguments})
    return out


def changes_from_post(post: QueryDict, *, start: dict[str, Any]) -> dict[str, Any]:
    """The change set the editor form describes, relative to ``start`` (the content the save lays
    its changes over). Raises :class:`annotations.content.InvalidContent` naming the bad field."""
    changes: dict[str, Any] = {}
    for name in tc.TEXT_FIELDS:
        value = _changed(post, name)
        if value is not None:
            changes[name] = value
    subtype = _changed(post, "subtype")
    if subtype is not None:
        changes["subtype"] = subtype or None
    if (rubric := _rubric(post, start["rubric"])) is not None:
        changes["rubric"] = rubric
    if steps := _steps(post, start["steps"]):
        changes["steps"] = steps
    return changes


def merged_from_post(post: QueryDict, *, base: dict[str, Any]) -> dict[str, Any]:
    """The full content a merge form describes: ``merge-<flattened field>`` values over ``base``."""
    flat = {
        key.removeprefix("merge-"): tc.parse_field(key.removeprefix("merge-"), value)
        for key, value in post.items()
        if key.startswith("merge-")
    }
    return tc.apply_flat(base=base, flat=flat)


def _field(name: str, lang: str, content: dict[str, Any], takes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    value = content[name]
    alternatives = {label: other[name] for label, other in takes.items() if other.get(name, value) != value}
    return {"name": name, "lang": lang, "value": value, "takes": alternatives}


def _arguments_json(arguments: Any) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def editor_fields(content: dict[str, Any], *, takes: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """What the editor template shows for a content snapshot: requests per form and language,
    subtype, answers, rubric rows with their keys, step arguments as indented JSON.

    ``takes`` (adjudication) maps a label (``A``, ``B``) to another full snapshot: each text field,
    the subtype and each step's arguments list that snapshot's value where it differs, so the
    adjudicator can take it field by field.
    """
    takes = takes or {}
    steps = []
    for step in content["steps"]:
        # Shown (and posted back) in the tool contract's terms, whatever version stored them.
        shown = contract_view(tool=step["tool"], arguments=step["arguments"])
        others = {
            label: _arguments_json(contract_view(tool=step["tool"], arguments=s["arguments"]))
            for label, other in takes.items()
            for s in other.get("steps", [])
            if s["idx"] == step["idx"] and s["arguments"] != step["arguments"]
        }
        steps.append(
            {
                **step,
                "json": _arguments_json(shown),
                # Sized to the arguments (3 rows clipped most calls); js/review.js grows it while typing.
                "rows": min(max(3, _arguments_json(shown).count("\n") + 2), 20),
                "takes": others,
                "rerunnable": rerunnable(step["tool"]),
            }
        )
    subtype = _field("subtype", "en", content, takes)
    return {
        "requests": [
            (form_label, [_field(f"request_{form}_{lang}", lang, content, takes) for lang in ("en", "zh")])
            for form, form_label in (("implicit", gettext_lazy("Implicit")), ("explicit", gettext_lazy("Explicit")))
        ],
        "answers": [_field(f"answer_{lang}", lang, content, takes) for lang in ("en", "zh")],
        "subtype": content["subtype"] or "",
        "subtype_takes": {label: value or "" for label, value in subtype["takes"].items()},
        "subtypes": [("", gettext_lazy("none")), *Subtype.choices],
        "rubric": [
            {
                **item,
                "key": _item_key(item, i),
                "compiled_json": json.dumps(item["compiled"]["check"], ensure_ascii=False)
                if item.get("compiled")
                else "",
            }
            for i, item in enumerate(content["rubric"])
        ],
        "steps": steps,
    }


def orig_twins(fields: dict[str, Any]) -> dict[str, str]:
    """The hidden ``orig-`` twins the editor renders for ``fields`` (input name, which is also its
    id, to the value it holds): what a draft save that keeps the DOM updates, so the next save
    compares against what was saved (and sending an original value back still undoes an edit)."""
    twins = {f"orig-{f['name']}": f["value"] for _label, cells in fields["requests"] for f in cells}
    twins.update({f"orig-{f['name']}": f["value"] for f in fields["answers"]})
    twins["orig-subtype"] = fields["subtype"]
    for i, item in enumerate(fields["rubric"]):
        twins[f"orig-rubric-{i}-text_en"] = item["text_en"]
        twins[f"orig-rubric-{i}-text_zh"] = item["text_zh"]
        twins[f"rubric-{i}-orig-is_safety"] = "1" if item["is_safety"] else "0"
        if item.get("compiled"):
            twins[f"orig-rubric-{i}-compiled_json"] = item["compiled_json"]
    twins.update({f"orig-step-{s['idx']}-arguments": s["json"] for s in fields["steps"]})
    return twins


def keeps_editor(post: QueryDict, *, before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether the editor ``post`` came from can stay as it is after a save that took the content from
    ``before`` to ``after``: the same rubric rows as the form posted (none added or removed), the same
    machine checks and compiled-suggestion states (the editor's options depend on them), the same steps.
    Only the values then differ, and those the reviewer's own form already holds."""

    def rendered(content: dict[str, Any]) -> tuple[Any, ...]:
        rubric = [((r.get("machine_check") or {}).get("kind"), r.get("compiled_state")) for r in content["rubric"]]
        return tuple(rubric), tuple(s["idx"] for s in content["steps"])

    rows = sorted({int(m[1]) for key in post if (m := _ROW.fullmatch(key))})
    keys = [_item_key(item, i) for i, item in enumerate(after["rubric"])]
    return [post[f"rubric-{row}-key"] for row in rows] == keys and rendered(before) == rendered(after)


def stale_twins(post: QueryDict, fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The posted ``orig-`` twins that no longer hold what ``fields`` (the saved draft) would render."""
    return [
        (name, value)
        for name, value in orig_twins(fields).items()
        if name in post and _norm(post[name]) != _norm(value)
    ]


class PostedEditorForm:
    """The editor (or merge) form of one request, read against the content it was drawn from: what the review
    services need of it (:class:`annotations.services.screen_actions.PostedEditor`)."""

    def __init__(self, post: QueryDict) -> None:
        self.post = post

    def changes(self, *, start: dict[str, Any]) -> dict[str, Any]:
        return changes_from_post(self.post, start=start)

    def merged(self, *, base: dict[str, Any]) -> dict[str, Any]:
        return merged_from_post(self.post, base=base)

    def keeps_editor(self, *, before: dict[str, Any], after: dict[str, Any]) -> bool:
        return keeps_editor(self.post, before=before, after=after)
