"""Template helpers for the record browser."""

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext

register = template.Library()


@register.simple_tag
def sparkline(points, width: int = 140, height: int = 28):
    """Inline SVG trend of a lab series (server-rendered: no JavaScript, works offline)."""
    values = [(p.charttime.timestamp(), p.valuenum) for p in points if p.valuenum is not None]
    if len(values) < 2:
        return ""
    t0, t1 = values[0][0], values[-1][0]
    lo, hi = min(v for _, v in values), max(v for _, v in values)
    span_t, span_v = (t1 - t0) or 1.0, (hi - lo) or 1.0
    coords = " ".join(
        f"{2 + (t - t0) / span_t * (width - 4):.1f},{height - 2 - (v - lo) / span_v * (height - 4):.1f}"
        for t, v in values
    )
    return format_html(
        '<svg class="spark" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">'
        '<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{}"/></svg>',
        width,
        height,
        width,
        height,
        gettext("trend %(low)s to %(high)s") % {"low": lo, "high": hi},
        coords,
    )
