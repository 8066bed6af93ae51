"""A counter for screens that cache a turn's rendered content per version of the turn.

Storing rubric suggestions in bulk (``manage.py compile_rubrics``) changes what a turn's editor shows
without a new version of the turn; it bumps this counter, which those screens put in their cache keys.
The counter is a database generation (:mod:`core.cache_generations`): a command's bump reaches every
server process, whatever the cache backend (issue 36, F10).
"""

from __future__ import annotations

from core.cache_generations import bump, generation

GENERATION = "rubric-suggestions"


def suggestions_generation() -> int:
    return generation(GENERATION)


def bump_suggestions_generation() -> None:
    """Call in the transaction that stores the suggestions."""
    bump(GENERATION)
