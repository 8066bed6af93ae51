"""Curated snapshots: immutable, versioned freezes of the approved set, their files, card and diff.

Modules: :mod:`.services` (create/build/export), :mod:`.selectors` (reads, file paths),
:mod:`.freeze` (which sessions and their frozen content), :mod:`.rows` (flat per-turn rows),
:mod:`.exporters` (PAB JSONL, flat JSONL, Parquet), :mod:`.card` (dataset card), :mod:`.diff`.
"""
