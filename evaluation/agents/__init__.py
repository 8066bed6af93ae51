"""Agents under test: an OpenAI-compatible model (:mod:`.llm`) and the built-in rules baselines (:mod:`.rules`)."""
