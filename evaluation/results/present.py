"""Display strings for the results pages (percent with one decimal, as in the paper; signed deltas)."""

from __future__ import annotations

from typing import Any

from annotations.templatetags.review_i18n import label_of
from evaluation.results.selectors import Column

# Text cells holding stored codes: shown as labels on the pages (the downloads keep the codes).
LABELLED = {"language": "language", "variant": "variant"}


def value_text(value: Any, *, percent: bool) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        return f"{100 * value:.1f}" if percent else f"{value:.4g}"
    return str(value)


def delta_text(delta: float | None, *, percent: bool) -> str:
    if delta is None:
        return "—"
    return f"{100 * delta:+.1f}" if percent else f"{delta:+.4g}"


def delta_class(delta: float | None) -> str:
    if not delta:
        return ""
    return "delta-up" if delta > 0 else "delta-down"


def _cell_text(row: dict[str, Any], col: Column) -> str:
    if col.key in LABELLED:
        return label_of(kind=LABELLED[col.key], code=row.get(col.key))
    return value_text(row.get(col.key), percent=col.percent)


def with_cells(row: dict[str, Any], cols: list[Column]) -> dict[str, Any]:
    cells = [{"key": c.key, "numeric": c.numeric, "text": _cell_text(row, c)} for c in cols]
    return {**row, "cells": cells}


def present_compare(cmp: dict[str, Any]) -> dict[str, Any]:
    for item in cmp["headline"]:
        item.update(
            a_text=value_text(item["a"], percent=item["percent"]),
            b_text=value_text(item["b"], percent=item["percent"]),
            delta_text=delta_text(item["delta"], percent=item["percent"]),
            delta_class=delta_class(item["delta"]),
        )
    for dimension in cmp["slices"]:
        for entry in dimension["entries"]:
            for c in entry["cells"]:
                c.update(
                    a_text=value_text(c["a"], percent=True),
                    b_text=value_text(c["b"], percent=True),
                    delta_text=delta_text(c["delta"], percent=True),
                    delta_class=delta_class(c["delta"]),
                )
    return cmp
