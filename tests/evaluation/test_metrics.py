"""Metrics against hand-computed examples."""

import pytest

from evaluation import metrics


def row(session, turn, score, *, tier=1, trial=0, language="en", variant="implicit", **extra):
    return {
        "session_id": session,
        "turn_index": turn,
        "score": score,
        "tier": tier,
        "trial": trial,
        "language": language,
        "variant": variant,
        "scored": 0 if score is None else 4,
        "unscored": 1,
        "infra_error": extra.pop("infra_error", ""),
        **extra,
    }


ROWS = [
    # s1 (L1): 1.0, 0.5 -> 0.75 ; s2 (L2): 0.75, 1.0 -> 0.875 ; s3 (L1): 0.25, None (unscored) -> 0.25
    row("s1", 0, 1.0),
    row("s1", 1, 0.5),
    row("s2", 0, 0.75, tier=2),
    row("s2", 1, 1.0, tier=2),
    row("s3", 0, 0.25),
    row("s3", 1, None),
    row("s3", 2, None, infra_error="http_500"),
]


def test_turn_score():
    assert metrics.turn_score(passed=3, scored=4) == 0.75
    assert metrics.turn_score(passed=0, scored=0) is None


def test_mrs_per_tier_and_all():
    m = metrics.mrs(ROWS)
    assert m["L1"] == pytest.approx((0.75 + 0.25) / 2)
    assert m["L2"] == pytest.approx(0.875)
    assert m["L3"] is None
    assert m["all"] == pytest.approx((0.75 + 0.875 + 0.25) / 3)


def test_pass_at_turn_and_session():
    # scored turns: 1.0, 0.5, 0.75, 1.0, 0.25
    assert metrics.pass_at_turn(ROWS, 0.6) == pytest.approx(3 / 5)
    assert metrics.pass_at_turn(ROWS, 0.75) == pytest.approx(3 / 5)
    assert metrics.pass_at_turn(ROWS, 0.8) == pytest.approx(2 / 5)
    # sessions: s1 has 0.5 (fails both), s2 passes both, s3 fails
    assert metrics.pass_at_session(ROWS, 0.6) == pytest.approx(1 / 3)
    assert metrics.pass_at_session(ROWS, 0.75) == pytest.approx(1 / 3)


def test_pass_hat_k_unbiased_and_flips():
    # task A: 3 trials, 2 pass ; task B: 3 trials, 3 pass ; task C: 3 trials, 0 pass
    rows = []
    for trial, (a, b, c) in enumerate([(1.0, 1.0, 0.0), (1.0, 1.0, 0.5), (0.5, 1.0, 0.0)]):
        rows += [row("sa", 0, a, trial=trial), row("sb", 0, b, trial=trial), row("sc", 0, c, trial=trial)]
    hat = metrics.pass_hat_k(rows, k_max=3, tau=0.75)
    assert hat["1"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert hat["2"] == pytest.approx((1 / 3 + 1 + 0) / 3)  # C(2,2)/C(3,2) = 1/3
    assert hat["3"] == pytest.approx((0 + 1 + 0) / 3)
    assert metrics.flip_share(rows, tau=0.75) == pytest.approx(1 / 3)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    values = metrics.unit_values(ROWS)
    assert values == {"s1": [0.75], "s2": [0.875], "s3": [0.25]}
    assert metrics.unit_values(ROWS, tau=0.6) == {"s1": [0.0], "s2": [1.0], "s3": [0.0]}
    ci1 = metrics.bootstrap_ci(values, n_boot=300, seed=3)
    assert ci1 == metrics.bootstrap_ci(values, n_boot=300, seed=3)
    lo, hi = ci1
    assert 0.25 <= lo <= metrics.mrs_value(ROWS) <= hi <= 0.875
    assert metrics.bootstrap_ci({"a": [0.5], "b": [0.5, 0.5]}, n_boot=50) == (0.5, 0.5)
    assert metrics.bootstrap_ci({}) is None


def test_safety_rate_errors_and_slices():
    rows = [
        row("s1", 0, 0.5, verdicts=[{"is_safety": True, "scored": True, "passed": False}], scenario="x"),
        row("s1", 1, 1.0, verdicts=[{"is_safety": True, "scored": True, "passed": True}], scenario="x"),
        row("s2", 0, None, infra_error="timeout", scenario="y", verdicts=[]),
    ]
    assert metrics.safety_failure_rate(rows) == 0.5
    errs = metrics.errors(rows)
    assert errs["infra"] == {"timeout": 1} and errs["infra_total"] == 1
    sl = metrics.slices(rows)
    assert sl["scenario"]["x"]["mRS"] == 0.75
    assert sl["scenario"]["y"]["mRS"] is None and sl["scenario"]["y"]["n_turns"] == 1
