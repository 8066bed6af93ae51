"""Inline SVG charts built in Python (no JS, no network): horizontal bars, a line and a scatter plot.

Every chart has a ``<title>`` and text labels on its marks, so it reads without colour or hover; all
text is escaped here (the result is marked safe for the template).
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

LABEL_W, BAR_W, ROW_H, PAD = 250, 340, 22, 8
COLOURS = ("#3b82f6", "#d4a72c")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def bar_chart(*, title: str, bars: list[dict[str, Any]], series: tuple[str, ...] = ("",)) -> SafeString:
    """``bars``: ``{"label", "values": [fraction|None per series], "note"}``; one group of bars per label."""
    n_series = len(series)
    group_h = ROW_H * n_series + 6
    legend_h = 18 if n_series > 1 else 0
    top = 26 + legend_h
    height = top + max(len(bars), 1) * group_h + PAD
    width = LABEL_W + BAR_W + 70
    out = [
        f'<svg class="results-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="600">{escape(title)}</text>',
    ]
    if n_series > 1:
        for i, name in enumerate(series):
            x = LABEL_W + i * 140
            out.append(f'<rect x="{x}" y="24" width="10" height="10" fill="{COLOURS[i % 2]}"/>')
            out.append(f'<text x="{x + 14}" y="33">{escape(name)}</text>')
    for gi, bar in enumerate(bars):
        y0 = top + gi * group_h
        label = str(bar["label"]) + (f" ({bar['note']})" if bar.get("note") else "")
        out.append(f'<text x="{LABEL_W - 6}" y="{y0 + 15}" text-anchor="end">{escape(label)}</text>')
        for si, value in enumerate(bar["values"]):
            y = y0 + si * ROW_H
            w = round(BAR_W * max(0.0, min(value or 0.0, 1.0)), 1)
            out.append(f'<rect x="{LABEL_W}" y="{y + 3}" width="{w}" height="{ROW_H - 6}" fill="{COLOURS[si % 2]}"/>')
            out.append(f'<text x="{LABEL_W + w + 4}" y="{y + 15}">{escape(_pct(value))}</text>')
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text node above is escaped


def _axes(out: list[str], *, x0: int, y0: int, w: int, h: int, x_label: str, y_label: str) -> None:
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0 + w}" y2="{y0}" stroke="#667"/>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 - h}" stroke="#667"/>')
    out.append(f'<text x="{x0 + w / 2}" y="{y0 + 32}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(
        f'<text x="14" y="{y0 - h / 2}" text-anchor="middle" transform="rotate(-90 14 {y0 - h / 2})">'
        f"{escape(y_label)}</text>"
    )
    for frac in (0, 0.5, 1):
        y = y0 - h * frac
        out.append(f'<text x="{x0 - 4}" y="{y + 4}" text-anchor="end">{int(frac * 100)}%</text>')


# Text boxes for laying labels out without overlap (12 px chart text; a generous width per character).
CHAR_W, TEXT_ASCENT, TEXT_H = 7.2, 11, 15
Box = tuple[float, float, float, float]  # x, y (top), width, height


def _text_box(x: float, baseline: float, text: str, anchor: str = "start") -> Box:
    w = CHAR_W * len(text)
    left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return (left, baseline - TEXT_ASCENT, w, TEXT_H)


def _clash(a: Box, b: Box) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _every(spacing: float, room: float) -> int:
    """Label every n-th of positions ``spacing`` px apart so that each label has ``room`` px."""
    return max(1, math.ceil(room / max(spacing, 1)))


def line_chart(
    *, title: str, series: dict[str, list[tuple[int, float | None]]], x_label: str, y_label: str
) -> SafeString:
    """One polyline per series over integer x (e.g. pass^k against k), y a fraction 0–1.

    Labels never overlap (issue 35): the legend sits under the title, x ticks thin out when k is dense,
    and each point's value goes above or below it, left or right, wherever it clashes with no other text;
    a value with no free place is left to the point's tooltip (every point has a ``<title>``)."""
    x0, top, w, h = 60, 70, 380, 160
    y0 = top + h
    xs = sorted({x for points in series.values() for x, _y in points}) or [1]
    span = (xs[-1] - xs[0]) or 1
    spacing = w / (len(xs) - 1) if len(xs) > 1 else w
    width, height = x0 + w + 56, y0 + 44

    def px_of(x: int) -> float:
        return x0 + w * (x - xs[0]) / span if len(xs) > 1 else x0 + w / 2

    out = [
        f'<svg class="results-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="600">{escape(title)}</text>',
    ]
    taken: list[Box] = [_text_box(0, 16, title)]
    legend_x = x0
    for si, name in enumerate(series):
        colour = COLOURS[si % 2]
        out.append(f'<rect x="{legend_x}" y="28" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{legend_x + 14}" y="37">{escape(name)}</text>')
        taken.append(_text_box(legend_x + 14, 37, name))
        legend_x += 14 + CHAR_W * len(name) + 18
    _axes(out, x0=x0, y0=y0, w=w, h=h, x_label=x_label, y_label=y_label)
    taken += [_text_box(x0 + w / 2, y0 + 32, x_label, "middle")]
    taken += [_text_box(x0 - 4, y0 - h * frac + 4, f"{int(frac * 100)}%", "end") for frac in (0, 0.5, 1)]
    taken.append((6, y0 - h / 2 - CHAR_W * len(y_label) / 2, TEXT_H, CHAR_W * len(y_label)))  # rotated y title
    tick_every = _every(spacing, CHAR_W * len(str(xs[-1])) + 8)
    for i, x in enumerate(xs):
        if i % tick_every == 0:
            out.append(f'<text x="{px_of(x)}" y="{y0 + 16}" text-anchor="middle">{x}</text>')
            taken.append(_text_box(px_of(x), y0 + 16, str(x), "middle"))
    label_every = _every(spacing, CHAR_W * len("100.0%") + 8)
    for si, (name, points) in enumerate(series.items()):
        colour = COLOURS[si % 2]
        coords = []
        for x, y in points:
            if y is None:
                continue
            px, py = px_of(x), y0 - h * y
            coords.append(f"{px:.1f},{py:.1f}")
            out.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"><title>{escape(name)}, '
                f"{escape(x_label)} = {x}: {escape(_pct(y))}</title></circle>"
            )
            if xs.index(x) % label_every and x != xs[-1]:
                continue
            text = _pct(y)
            for dx, dy, anchor in ((5, -5, "start"), (5, 15, "start"), (-5, -5, "end"), (-5, 15, "end")):
                box = _text_box(px + dx, py + dy, text, anchor)
                if box[0] >= 0 and box[0] + box[2] <= width and not any(_clash(box, t) for t in taken):
                    taken.append(box)
                    out.append(
                        f'<text x="{px + dx:.1f}" y="{py + dy:.1f}" text-anchor="{anchor}" fill="{colour}">'
                        f"{escape(text)}</text>"
                    )
                    break
        if coords:
            out.append(f'<polyline fill="none" stroke="{colour}" points="{" ".join(coords)}"/>')
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text node above is escaped


def scatter_chart(*, title: str, points: list[dict[str, Any]], x_label: str, y_label: str) -> SafeString:
    """``points``: ``{"label", "x" (e.g. cost), "y" (fraction)}``; points without x or y are listed apart."""
    x0, y0, w, h = 60, 220, 420, 180
    placed = [p for p in points if p.get("x") is not None and p.get("y") is not None]
    x_max = max((p["x"] for p in placed), default=0) or 1
    width, height = x0 + w + 160, y0 + 44
    out = [
        f'<svg class="results-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="600">{escape(title)}</text>',
    ]
    _axes(out, x0=x0, y0=y0, w=w, h=h, x_label=x_label, y_label=y_label)
    out.append(f'<text x="{x0}" y="{y0 + 16}" text-anchor="middle">0</text>')
    out.append(f'<text x="{x0 + w}" y="{y0 + 16}" text-anchor="middle">{escape(f"{x_max:.4g}")}</text>')
    labels: list[tuple[float, float]] = []
    for p in placed:
        px, py = x0 + w * p["x"] / x_max, y0 - h * p["y"]
        ly = py - 6
        while any(abs(px - lx) < 150 and abs(ly - other) < 13 for lx, other in labels):
            ly += 13  # runs with equal figures: stack their labels instead of overprinting them
        labels.append((px, ly))
        out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{COLOURS[0]}"/>')
        out.append(f'<text x="{px + 6:.1f}" y="{ly:.1f}">{escape(p["label"])} ({escape(_pct(p["y"]))})</text>')
    if not placed:
        out.append(f'<text x="{x0 + 10}" y="{y0 - h / 2}">—</text>')
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text node above is escaped


def interval_chart(*, title: str, bars: list[dict[str, Any]], threshold: float | None = None) -> SafeString:
    """``bars``: ``{"label", "value", "low", "high"}`` (fractions or None): a bar with its 95% interval as a
    whisker; ``threshold``: a dashed vertical line (e.g. the certification threshold)."""
    top = 26
    height = top + max(len(bars), 1) * ROW_H + PAD + 14
    width = LABEL_W + BAR_W + 150
    out = [
        f'<svg class="results-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="600">{escape(title)}</text>',
    ]

    def x_of(v: float) -> float:
        return round(LABEL_W + BAR_W * max(0.0, min(v, 1.0)), 1)

    for i, bar in enumerate(bars):
        y = top + i * ROW_H
        value, low, high = bar.get("value"), bar.get("low"), bar.get("high")
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 15}" text-anchor="end">{escape(str(bar["label"]))}</text>')
        if value is not None:
            out.append(
                f'<rect x="{LABEL_W}" y="{y + 4}" width="{x_of(value) - LABEL_W}" height="{ROW_H - 8}" '
                f'fill="{COLOURS[0]}" opacity="0.75"/>'
            )
        if low is not None and high is not None:
            mid = y + ROW_H / 2
            out.append(
                f'<line x1="{x_of(low)}" y1="{mid}" x2="{x_of(high)}" y2="{mid}" stroke="#111" stroke-width="1.5"/>'
            )
            for end in (low, high):
                out.append(f'<line x1="{x_of(end)}" y1="{mid - 5}" x2="{x_of(end)}" y2="{mid + 5}" stroke="#111"/>')
        text = _pct(value) + (f" [{_pct(low)}, {_pct(high)}]" if low is not None and high is not None else "")
        out.append(f'<text x="{LABEL_W + BAR_W + 6}" y="{y + 15}">{escape(text)}</text>')
    if threshold is not None:
        x, bottom = x_of(threshold), top + len(bars) * ROW_H
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#b91c1c" stroke-dasharray="4 3"/>')
        out.append(
            f'<text x="{x}" y="{bottom + 12}" text-anchor="middle" fill="#b91c1c">{escape(_pct(threshold))}</text>'
        )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text node above is escaped
