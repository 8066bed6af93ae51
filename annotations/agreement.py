"""Inter-rater agreement: percent agreement, Cohen's κ and Gwet's AC1 (rater pairs), Krippendorff's α (nominal).

κ and α discount the agreement expected by chance from the raters' label frequencies; when nearly every
label is the same (prevalence: almost every decision is "approve") that expectation is close to the
observed agreement and both fall towards 0 even when the raters almost always agree. Gwet's AC1 takes
chance agreement from how evenly the labels are spread instead, so it stays close to the raw agreement.

Pure functions over plain data. Ratings are ``{unit: {rater: label}}``: a unit is a turn (decisions)
or a (turn, rubric item) pair (keep/drop). :func:`ratings_from_reviews` builds both from reviews.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Ratings = Mapping[Hashable, Mapping[Hashable, Hashable]]


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Share of units two raters labelled the same (NaN when there is no unit)."""
    if len(a) != len(b):
        raise ValueError("both raters need the same number of units")
    if not a:
        return math.nan
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def cohens_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """κ = (p_o − p_e) / (1 − p_e) with p_e from each rater's own label frequencies.

    When chance agreement is certain (both raters used one and the same label throughout) κ is
    undefined; we return 1.0 if they agree everywhere and NaN otherwise (and NaN for no units).
    """
    if len(a) != len(b):
        raise ValueError("both raters need the same number of units")
    n = len(a)
    if n == 0:
        return math.nan
    p_o = percent_agreement(a, b)
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca.keys() | cb.keys()) / (n * n)
    if math.isclose(p_e, 1.0):
        return 1.0 if math.isclose(p_o, 1.0) else math.nan
    return (p_o - p_e) / (1 - p_e)


def gwet_ac1(a: Sequence[Hashable], b: Sequence[Hashable], *, categories: Iterable[Hashable] = ()) -> float:
    """Gwet's AC1 = (p_o − p_e) / (1 − p_e) with p_e = Σ_k π_k (1 − π_k) / (q − 1), π_k the share of label
    k over both raters and q the number of possible labels (``categories`` plus any seen; at least 2).
    NaN for no units; 1.0 when chance agreement is certain and the raters agree."""
    if len(a) != len(b):
        raise ValueError("both raters need the same number of units")
    n = len(a)
    if n == 0:
        return math.nan
    p_o = percent_agreement(a, b)
    counts = Counter(a) + Counter(b)
    q = max(2, len(set(categories) | set(counts)))
    p_e = sum((c / (2 * n)) * (1 - c / (2 * n)) for c in counts.values()) / (q - 1)
    if math.isclose(p_e, 1.0):
        return 1.0 if math.isclose(p_o, 1.0) else math.nan
    return (p_o - p_e) / (1 - p_e)


def krippendorff_alpha_nominal(ratings: Ratings) -> float:
    """α = 1 − D_o / D_e over the coincidence matrix; units with fewer than two labels are ignored.

    Any number of raters, missing ratings allowed. NaN with fewer than two pairable values; 1.0
    when every pairable value is the same label (no disagreement is possible or observed).
    """
    coincidence: Counter[tuple[Hashable, Hashable]] = Counter()
    for labels_by_rater in ratings.values():
        labels = list(labels_by_rater.values())
        m = len(labels)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidence[(labels[i], labels[j])] += 1 / (m - 1)
    n = sum(coincidence.values())
    if n < 2:
        return math.nan
    n_c: Counter[Hashable] = Counter()
    for (c, _k), v in coincidence.items():
        n_c[c] += v
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = (n * n - sum(v * v for v in n_c.values())) / (n - 1)
    if math.isclose(expected, 0.0, abs_tol=1e-12):
        return 1.0
    return 1 - observed / expected


@dataclass(frozen=True)
class PairStats:
    rater_a: Hashable
    rater_b: Hashable
    n: int
    percent: float
    kappa: float
    ac1: float = math.nan  # Gwet's AC1 (prevalence-robust; see the module docstring)


def pairwise(ratings: Ratings, *, categories: Iterable[Hashable] = ()) -> list[PairStats]:
    """Percent agreement, κ and AC1 for every rater pair, over the units both rated. ``categories``: the
    labels a rater could have given (AC1's q), besides those used anywhere in ``ratings``."""
    raters = sorted({r for labels in ratings.values() for r in labels}, key=str)
    labels_used = {label for labels in ratings.values() for label in labels.values()}
    possible = labels_used | set(categories)
    out = []
    for ra, rb in itertools.combinations(raters, 2):
        units = [u for u, labels in ratings.items() if ra in labels and rb in labels]
        a = [ratings[u][ra] for u in units]
        b = [ratings[u][rb] for u in units]
        out.append(
            PairStats(
                ra,
                rb,
                len(units),
                percent_agreement(a, b),
                cohens_kappa(a, b),
                gwet_ac1(a, b, categories=possible),
            )
        )
    return out


def low_kappa_high_agreement(
    pairs: Iterable[PairStats], *, kappa_below: float = 0.4, percent_at_least: float = 0.9
) -> bool:
    """Whether some pair agrees on ≥ 90% of units yet has κ < 0.4 (or undefined): the prevalence paradox."""
    return any(p.n and p.percent >= percent_at_least and (math.isnan(p.kappa) or p.kappa < kappa_below) for p in pairs)


def ratings_from_reviews(reviews: Iterable[Any]) -> tuple[dict, dict]:
    """``(decisions, rubric)`` ratings from submitted reviews (objects with turn_id, reviewer, decision,
    base_content, proposed). Rubric: every item of the reviewer's base is ``keep`` if its id is still
    in the proposal, else ``drop``. Raters are usernames."""
    decisions: dict[Hashable, dict[Hashable, Hashable]] = {}
    rubric: dict[Hashable, dict[Hashable, Hashable]] = {}
    for review in reviews:
        rater = review.reviewer.get_username()
        decisions.setdefault(review.turn_id, {})[rater] = review.decision
        kept = {item.get("id") for item in (review.proposed or {}).get("rubric", [])}
        for item in (review.base_content or {}).get("rubric", []):
            label = "keep" if item.get("id") in kept else "drop"
            rubric.setdefault((review.turn_id, item.get("id")), {})[rater] = label
    return decisions, rubric


def format_statistic(value: float, *, percent: bool = False) -> str:
    """How agreement figures are shown everywhere (command, dashboard): ``—`` when undefined."""
    if math.isnan(value):
        return "—"
    return f"{100 * value:.1f}" if percent else f"{value:.3f}"
