"""Coverage of the rubric compiler: items compiled per task type and language, by rule, and why not."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from scenarios.rubric_compiler.types import Outcome

TASK_TYPES = ("IL", "DG", "CR", "WU")


@dataclass(frozen=True)
class ItemRow:
    task_type: str
    compiled: bool
    rule: str  # the rule that matched, or the reason it did not compile
    languages: tuple[str, ...]  # languages whose wording alone compiles to a check
    has_zh: bool


@dataclass
class Coverage:
    rows: list[ItemRow] = field(default_factory=list)
    stored: Counter[str] = field(default_factory=Counter)  # new / updated / unchanged / kept / machine_check

    def add(self, *, task_type: str, outcome: Outcome, has_zh: bool) -> None:
        compiled = outcome.compiled
        langs = tuple(lang for lang, result in outcome.per_language.items() if compiled and lang in compiled.languages)
        self.rows.append(
            ItemRow(task_type, compiled is not None, compiled.rule if compiled else outcome.reason, langs, has_zh)
        )

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def n_compiled(self) -> int:
        return sum(r.compiled for r in self.rows)

    @property
    def rate(self) -> float:
        return self.n_compiled / self.n if self.n else 0.0

    def by_task_type(self) -> list[list[str]]:
        """``[task type, items, compiled, %, EN, ZH]`` rows (EN/ZH: items whose wording in that language compiles)."""
        out = []
        kinds = [t for t in TASK_TYPES if any(r.task_type == t for r in self.rows)]
        kinds += sorted({r.task_type for r in self.rows} - set(TASK_TYPES))
        for kind in [*kinds, "all"]:
            rows = self.rows if kind == "all" else [r for r in self.rows if r.task_type == kind]
            done = sum(r.compiled for r in rows)
            en = sum("en" in r.languages for r in rows)
            zh = sum("zh" in r.languages for r in rows)
            n_zh = sum(r.has_zh for r in rows)
            out.append([kind, str(len(rows)), str(done), _pct(done, len(rows)), f"{en}/{len(rows)}", f"{zh}/{n_zh}"])
        return out

    def by_rule(self) -> list[tuple[str, int]]:
        return Counter(r.rule for r in self.rows if r.compiled).most_common()

    def not_compiled(self) -> list[tuple[str, int]]:
        return Counter(r.rule for r in self.rows if not r.compiled).most_common()

    def summary_line(self) -> str:
        return f"rubric compiler: {self.n_compiled} of {self.n} item(s) compiled ({_pct(self.n_compiled, self.n)})"

    def lines(self) -> list[str]:
        """The coverage report as printed by ``compile_rubrics`` (and, shortened, by ``import_pab``)."""
        out = [self.summary_line()]
        if not self.rows:
            return out
        out.append("")
        out += table([["task type", "items", "compiled", "%", "EN", "ZH"], *self.by_task_type()])
        out.append("")
        out.append("compiled by rule: " + (", ".join(f"{rule} {n}" for rule, n in self.by_rule()) or "none"))
        out.append("not compiled: " + (", ".join(f"{why} {n}" for why, n in self.not_compiled()) or "none"))
        if self.stored:
            out.append("stored: " + ", ".join(f"{what} {n}" for what, n in sorted(self.stored.items())))
        return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
