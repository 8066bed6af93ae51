"""The pass^k chart's labels do not overlap (issue 35, polish: "the pass^k chart's labels overlap").

Chromium lays the chart out (its own font metrics, the page's 12 px chart text) and every text box is checked
against every other and against the chart's edges. Cases: the run page's two series (English and Chinese) with
close figures, as runs usually have, over the k of a 4-trial run and of a 16-trial run, plus one at 100 %.
"""

from pathlib import Path

import pytest
from django.conf import settings

from evaluation.results import charts

APP_CSS = Path(settings.BASE_DIR) / "static" / "css" / "app.css"

pytestmark = [pytest.mark.e2e]

SERIES = {
    "4 trials, close figures": {
        "English": [(1, 0.625), (2, 0.5), (3, 0.4375), (4, 0.375)],
        "Chinese": [(1, 0.6), (2, 0.5), (3, 0.425), (4, 0.375)],
    },
    "16 trials": {
        "English": [(k, max(0.0, 0.9 - 0.04 * k)) for k in range(1, 17)],
        "Chinese": [(k, max(0.0, 0.88 - 0.04 * k)) for k in range(1, 17)],
    },
    "at 100 %": {"English": [(1, 1.0), (2, 1.0)], "Chinese": [(1, 1.0), (2, 0.95)]},
}

BOXES = """() => {
  const svg = document.querySelector('svg');
  const outer = svg.getBoundingClientRect();
  const boxes = [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height};
  });
  return {outer: {x: outer.x, y: outer.y, w: outer.width, h: outer.height}, boxes};
}"""


def _overlap(a, b) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


@pytest.mark.parametrize("case", SERIES)
def test_pass_hat_labels_do_not_overlap(page, case, screenshot_dir):
    svg = charts.line_chart(title="pass^k against k (τ = 0.75)", series=SERIES[case], x_label="k", y_label="pass^k")
    page.set_content(f'<html><body><main><section class="card">{svg}</section></main></body></html>')
    page.add_style_tag(path=str(APP_CSS))  # the site's fonts and the charts' 12 px text
    got = page.evaluate(BOXES)
    boxes, outer = got["boxes"], got["outer"]
    clashes = [(a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if _overlap(a, b)]
    assert not clashes, clashes
    page.screenshot(path=str(screenshot_dir / f"pass_hat_{case.split()[0]}.png"))
    outside = [b["text"] for b in boxes if b["x"] < outer["x"] or b["x"] + b["w"] > outer["x"] + outer["w"] + 0.5]
    assert not outside, outside
