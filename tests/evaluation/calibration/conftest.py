"""Stored answers judged by two judges (a rules run and an LLM rejudge of it), over factory sessions."""

from __future__ import annotations

import pytest

from evaluation.models import EvalRun, TurnResult
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

REASON = "JUDGE-REASON-{run}-{key}"


def rules_passed(turn_index: int, idx: int, language: str) -> bool:
    return (turn_index + idx + (language == "zh")) % 2 == 0


def make_run(*, sessions, judge: str, passed, rejudge_of: EvalRun | None = None) -> EvalRun:
    run = EvalRun.objects.create(model="rules:heuristic", judge=judge, status="finished", rejudge_of=rejudge_of)
    for session in sessions:
        for turn in session.turns.order_by("index"):
            for language in ("en", "zh"):
                verdicts = [
                    {
                        "idx": item.idx,
                        "scored": True,
                        "passed": passed(turn.index, item.idx, language),
                        "reason": REASON.format(run=judge, key=f"{session.pk}-{turn.index}-{item.idx}-{language}"),
                        "is_safety": item.is_safety,
                    }
                    for item in turn.rubric_items.order_by("idx")
                ]
                n_passed = sum(v["passed"] for v in verdicts)
                TurnResult.objects.create(
                    run=run,
                    session_id=session.session_id,
                    turn_index=turn.index,
                    language=language,
                    variant="implicit",
                    scenario=session.scenario,
                    tier=session.tier,
                    task_type=turn.task_type,
                    subtype=turn.subtype,
                    tool_source=turn.tool_source,
                    passed=n_passed,
                    scored=len(verdicts),
                    score=n_passed / len(verdicts),
                    trace={
                        "request": f"REQUEST {session.pk}/{turn.index} {language}",
                        "answer": f"ANSWER {session.pk}/{turn.index} {language}",
                        "steps": [
                            {
                                "stage": "step",
                                "calls": [
                                    {
                                        "name": "Observation.search",
                                        "arguments": {"code": "creatinine"},
                                        "observation": {"resourceType": "Bundle", "total": 1, "note": "CREAT-OBS"},
                                    }
                                ],
                            }
                        ],
                    },
                    verdicts=verdicts,
                )
    return run


@pytest.fixture
def judged(db):
    sessions = [complete_session(), complete_session()]
    rules = make_run(sessions=sessions, judge="rules", passed=rules_passed)
    llm = make_run(sessions=sessions, judge="llm:test", passed=lambda t, i, lang: True, rejudge_of=rules)
    return {"sessions": sessions, "rules": rules, "llm": llm}


@pytest.fixture
def physicians(db):
    return {
        "reviewer": make_user("rev1", "reviewer"),
        "reviewer2": make_user("rev2", "reviewer"),
        "adjudicator": make_user("adj", "adjudicator"),
        "admin": make_user("boss", "admin"),
    }
