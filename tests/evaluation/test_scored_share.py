"""Honest offline scores (issue 33): the share of items scored, unscored turns, the rules judge's notice.

Cases written for this test: turn rows shaped like :func:`evaluation.metrics.row_of`'s (3 turns, one with no
item scored, as the rules judge leaves a release record whose items have no machine check).
"""

from __future__ import annotations

from types import SimpleNamespace

from evaluation import metrics
from evaluation.reports import unscored_notice
from evaluation.results.selectors import run_row

ROWS = [
    {"session_id": "s", "language": "en", "tier": 1, "turn_index": 0, "score": 1.0, "scored": 3, "unscored": 0},
    {"session_id": "s", "language": "en", "tier": 1, "turn_index": 1, "score": None, "scored": 0, "unscored": 5},
    {"session_id": "s", "language": "en", "tier": 1, "turn_index": 2, "score": 0.5, "scored": 2, "unscored": 4},
    {
        "session_id": "s",
        "language": "en",
        "tier": 1,
        "turn_index": 3,
        "score": None,
        "scored": 0,
        "unscored": 6,
        "infra_error": "timeout",
    },
]


def test_share_scored_and_unscored_turns():
    m = metrics.language_metrics(ROWS, trials=1, n_boot=10)
    assert m["scored_share"] == round(5 / 14, 4)  # the infrastructure error's items are not counted
    assert m["n_turns_unscored"] == 1
    assert m["n_turns_scored"] == 2
    # the unscored turn is neither passed nor failed: mRS over the two scored turns
    assert m["mRS"]["all"] == 0.75


def test_the_rules_judge_says_what_it_could_not_score():
    summary = {
        "run_id": 7,
        "judge": "rules",
        "metrics": {"en": {"n_items_scored": 5, "n_items_unscored": 9, "n_turns_unscored": 1}},
    }
    text = unscored_notice(summary)
    assert text.startswith("9 of 14 rubric items could not be scored by the rules judge")
    assert "1 turn(s) had no scored item" in text and "runeval --rejudge 7 --judge <model>" in text
    summary["metrics"]["en"]["n_items_unscored"] = 0
    assert unscored_notice(summary) is None


def test_leaderboard_marks_a_run_scored_on_less_than_half_its_items():
    def run(share):
        summary = {"metrics": {"en": {"scored_share": share}}, "model": "m", "judge": "rules"}
        return SimpleNamespace(pk=1, summary=summary, manifest={}, model="m", judge="rules", status="finished")

    assert run_row(run=run(0.3))["low_scored"] is True
    assert run_row(run=run(0.8))["low_scored"] is False
