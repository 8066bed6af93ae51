"""What the take buttons say: derived from the review's decision, reject reason and the changes taking it
writes (annotations.services.adjudication.adjudicate takes both the decision and the content)."""

from __future__ import annotations

import pytest

from annotations.adjudication_screen import proposed_content, take
from annotations.models import Review


@pytest.mark.parametrize(
    ("decision", "reason", "changes", "button", "consequence"),
    [
        (
            "approve",
            "",
            0,
            "Take review A: approve without changes",
            "If taken: the turn will be approved as it is.",
        ),
        (
            "approve",
            "",
            3,
            "Take review A: approve with 3 changes",
            "If taken: the turn will be approved, with this review's 3 changes written to it.",
        ),
        (
            "reject",
            "wrong tool/arguments",
            0,
            "Take review A: reject (wrong tool/arguments)",
            "If taken: the turn will be rejected; its content stays as it is.",
        ),
        (
            "reject",
            "unsafe",
            1,
            "Take review A: reject (unsafe)",
            "If taken: the turn will be rejected, with this review's 1 change written to it.",
        ),
    ],
)
def test_take_wording(decision, reason, changes, button, consequence):
    option = take(label="A", decision=decision, reject_reason=reason, changes=changes)
    assert (option.label, option.button, option.consequence) == ("A", button, consequence)


def test_proposal_is_laid_over_the_current_content():
    """Changes relative to the review's base; a field the review left alone keeps the current value."""
    base = {"answer_en": "Cr 1.4", "answer_zh": "肌酐 1.4", "rubric": [], "steps": []}
    current = {**base, "answer_zh": "血肌酐 1.4"}  # changed after the review started
    review = Review(base_content=base, proposed={**base, "answer_en": "Cr 1.6"})
    assert proposed_content(current=current, review=review) == {**current, "answer_en": "Cr 1.6"}
    assert proposed_content(current=current, review=Review(base_content={}, proposed={})) == current
