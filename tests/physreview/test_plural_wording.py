"""Issue 35 (polish): no "field(s)" wording in the UI; counts take proper plural forms in English and Chinese.

Cases: the strings the issue's reviewer met (conflict and save messages on the review screen, the admin's
assignment messages), and every string marked for translation (the Chinese catalogue holds them all:
tests/physreview/test_i18n.py checks that it is complete).
"""

from __future__ import annotations

import re

from django.utils import translation

from annotations.diffs import diff_field
from annotations.services.errors import Conflict, DraftConflict
from tests.physreview.test_i18n import PO, parse_po

BRACKETED = re.compile(r"\w\((s|es)\)")  # "field(s)", not the placeholder "%(s)s"


def test_no_translated_ui_string_says_s_in_brackets():
    entries = parse_po(PO.read_text(encoding="utf-8"))
    bracketed = [e.msgid for e in entries if BRACKETED.search(e.msgid) or BRACKETED.search(e.msgid_plural or "")]
    assert not bracketed, f"use ngettext / blocktranslate count instead: {bracketed}"


def _conflict(cls, n: int):
    diffs = [diff_field(f"answer_{i}", "a", "b") for i in range(n)]
    return cls(base_version=1, current_version=2, mine={}, current={}, diffs=diffs)


def test_conflict_messages_count_fields_in_both_languages():
    with translation.override("en"):
        assert str(_conflict(Conflict, 1)).endswith("1 field of yours is kept for merging.")
        assert str(_conflict(Conflict, 3)).endswith("3 fields of yours are kept for merging.")
        assert str(_conflict(DraftConflict, 1)).endswith("1 field to merge.")
        assert str(_conflict(DraftConflict, 2)).endswith("2 fields to merge.")
    with translation.override("zh-hans"):
        assert "您修改的 3 个字段已保留" in str(_conflict(Conflict, 3))
        assert "有 2 个字段待合并" in str(_conflict(DraftConflict, 2))
