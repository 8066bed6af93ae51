"""Agreement statistics against numbers worked out by hand below."""

import math

import pytest
from django.core.management import call_command

from annotations import services
from annotations.agreement import (
    cohens_kappa,
    krippendorff_alpha_nominal,
    pairwise,
    percent_agreement,
    ratings_from_reviews,
)
from annotations.selectors import submitted_reviews

# Two raters, ten turns (A = approve, R = reject); they differ on turns 3 and 6.
X = list("AAAARRAARA")
Y = list("AARARAAARA")


def test_percent_agreement():
    assert percent_agreement(X, Y) == pytest.approx(8 / 10)


def test_cohens_kappa_hand_computed():
    # p_o = 8/10. X: 7 A, 3 R; Y: 7 A, 3 R. p_e = (7·7 + 3·3) / 100 = 0.58.
    # κ = (0.80 − 0.58) / (1 − 0.58) = 0.22 / 0.42 = 11/21 ≈ 0.5238
    assert cohens_kappa(X, Y) == pytest.approx(11 / 21)


def test_cohens_kappa_edges():
    assert cohens_kappa(list("AB"), list("AB")) == pytest.approx(1.0)
    assert cohens_kappa(list("AB"), list("BA")) == pytest.approx(-1.0)
    assert cohens_kappa(list("AAA"), list("AAA")) == 1.0  # chance agreement certain, and agreed
    assert math.isnan(cohens_kappa([], []))


def test_krippendorff_alpha_two_raters_hand_computed():
    # Coincidences (each unit of 2 values adds both ordered pairs once):
    # o_AA = 2·6 = 12, o_RR = 2·2 = 4, o_AR = o_RA = 2; n = 20, n_A = 14, n_R = 6.
    # α = 1 − (n − 1)·(o_AR + o_RA) / (n² − Σ n_c²) = 1 − 19·4 / (400 − 196 − 36) = 1 − 76/168 = 23/42 ≈ 0.5476
    ratings = {i: {"x": a, "y": b} for i, (a, b) in enumerate(zip(X, Y, strict=True))}
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(23 / 42)


def test_krippendorff_alpha_three_raters_with_missing_hand_computed():
    # u1 {A,A,A}: 6 ordered pairs × 1/2 → o_AA += 3
    # u2 {A,R}: o_AR += 1, o_RA += 1
    # u3 {R,R,A}: (R,R) 2 × 1/2 → o_RR += 1; (R,A) 2 × 1/2 → o_RA += 1; (A,R) 2 × 1/2 → o_AR += 1
    # u4 {A}: not pairable, ignored.
    # o_AA = 3, o_RR = 1, o_AR = o_RA = 2; n = 8, n_A = 5, n_R = 3.
    # α = 1 − 7·4 / (64 − 25 − 9) = 1 − 28/30 = 1/15 ≈ 0.0667
    ratings = {
        "u1": {"x": "A", "y": "A", "z": "A"},
        "u2": {"x": "A", "y": "R"},
        "u3": {"x": "R", "y": "R", "z": "A"},
        "u4": {"x": "A"},
    }
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(1 / 15)


def test_pairwise_uses_shared_units():
    ratings = {"u1": {"x": "A", "y": "A", "z": "R"}, "u2": {"x": "R", "y": "R"}}
    stats = {(p.rater_a, p.rater_b): p for p in pairwise(ratings)}
    assert stats[("x", "y")].n == 2 and stats[("x", "y")].percent == 1.0
    assert stats[("x", "z")].n == 1 and stats[("x", "z")].percent == 0.0


def _review_all(session, reviewers):
    from annotations.content import snapshot

    for t in session.turns.order_by("index"):
        rubric = snapshot(turn=t)["rubric"]
        # rev1 approves everything unchanged; rev2 rejects turn 0 and drops rubric item 1 of turn 1.
        services.submit_review(turn=t, reviewer=reviewers[0], decision="approve", base_version=t.version)
        if t.index == 0:
            services.submit_review(
                turn=t, reviewer=reviewers[1], decision="reject", reject_reason="other", base_version=t.version
            )
        elif t.index == 1:
            services.submit_review(
                turn=t, reviewer=reviewers[1], decision="approve", proposed={"rubric": rubric[:1]}, base_version=1
            )
        else:
            services.submit_review(turn=t, reviewer=reviewers[1], decision="approve", base_version=t.version)


def test_ratings_from_reviews_and_command(assigned, reviewers, capsys):
    _review_all(assigned, reviewers)
    decisions, rubric = ratings_from_reviews(submitted_reviews())
    assert len(decisions) == 4 and len(rubric) == 8
    [pair] = pairwise(decisions)
    assert pair.percent == pytest.approx(3 / 4)
    # rev1: AAAA, rev2: RAAA → p_e = (4·3 + 0·1)/16 = 0.75, p_o = 0.75 → κ = 0
    assert pair.kappa == pytest.approx(0.0)
    [rpair] = pairwise(rubric)
    assert rpair.n == 8 and rpair.percent == pytest.approx(7 / 8)

    call_command("review_agreement")
    out = capsys.readouterr().out
    assert "decisions (approve/reject): 4 units" in out
    assert "rev1" in out and "rev2" in out and "75.0" in out
    assert "rubric items (keep/drop): 8 units" in out and "87.5" in out
    assert "Krippendorff's alpha (nominal)" in out


def test_command_with_no_reviews(db, capsys):
    call_command("review_agreement")
    assert "0 units" in capsys.readouterr().out
