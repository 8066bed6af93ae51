"""The gold answer against compiled checks: a compiled check the gold answer fails is suspect (or the gold is)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from evaluation.judges.rules import judge_check


@dataclass
class GoldPass:
    """Pass counts of the gold answer per language over compiled checks (a ``compile_rubrics`` hook)."""

    passed: Counter[str] = field(default_factory=Counter)
    judged: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def __call__(self, outcome: Any, *, task_type: str, answers: dict[str, str], writes: list[dict[str, Any]]) -> None:
        check = outcome.compiled.check
        for lang in ("en", "zh"):
            if not (answers.get(lang) or "").strip():
                continue
            verdict = judge_check(idx=0, check=check, answer=answers[lang], writes=writes)
            self.judged[lang] += 1
            self.passed[lang] += bool(verdict.passed)
            if not verdict.passed:
                self.failures.append(f"{task_type} {lang} {outcome.compiled.rule}: {verdict.reason}")

    def line(self) -> str:
        total, ok = sum(self.judged.values()), sum(self.passed.values())
        parts = ", ".join(f"{lang.upper()} {self.passed[lang]}/{self.judged[lang]}" for lang in sorted(self.judged))
        share = f"{100 * ok / total:.1f}%" if total else "—"
        return f"gold answer passes {ok} of {total} compiled checks ({share}; {parts or 'none'})"
