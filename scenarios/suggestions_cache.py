"""A counter for screens that cache a turn's rendered content per version of the turn.

Storing rubric suggestions in bulk (``manage.py compile_rubrics``) changes what a turn's editor shows
without a new version of the turn; it bumps this counter, which those screens put in their cache keys.
"""

from __future__ import annotations

from django.core.cache import cache

GENERATION_KEY = "rubric-suggestions:generation"


def suggestions_generation() -> int:
    return cache.get(GENERATION_KEY, 0)


def bump_suggestions_generation() -> None:
    if not cache.add(GENERATION_KEY, 1, None):
        cache.incr(GENERATION_KEY)
