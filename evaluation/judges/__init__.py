"""Judges: the deterministic ``rules`` judge (:mod:`.rules`) and the LLM judges (:mod:`.llm`, :mod:`.release`).

The rules judge writes its reasons itself, in English shapes the UI shows in its language
(:mod:`scenarios.rubric_reasons`); an LLM judge's reasons are the model's own words, shown as written.
"""

# Judge names whose reasons the harness writes: the rules judge on stored runs, and recomputed on
# compiled items (evaluation.calibration.compiled.COMPILED_JUDGE). Any other judge is a model.
RULES_JUDGES = frozenset({"rules", "rules (compiled)"})


def is_model_judge(name: str | None) -> bool:
    """Whether a judge's reasons are a model's own text (not worded by the harness)."""
    return bool(name) and name not in RULES_JUDGES
