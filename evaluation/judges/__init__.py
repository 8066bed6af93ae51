"""Judges: the deterministic ``rules`` judge (:mod:`.rules`) and the LLM judge (:mod:`.llm`)."""
