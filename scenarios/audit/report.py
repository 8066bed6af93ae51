"""What an audit run found, per session and turn, and its plain-text rendering (tables and totals)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

COUNT_KEYS = ("calls", "reproduced", "differs", "leaks", "not_reexecuted", "untraced", "premises")
# Information, not a warning: a number traced to the knowledge table (scenarios.audit.knowledge).
INFO_KIND = "knowledge"
_HEADINGS = ("turn", "EHR calls", "reproduced", "differ", "leak", "not re-run", "untraced", "premises")


@dataclass
class TurnResult:
    turn_id: int
    index: int
    counts: dict[str, int]
    calls: list[dict[str, Any]]
    findings: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.index,
            "turn_id": self.turn_id,
            "counts": self.counts,
            "calls": self.calls,
            "findings": self.findings,
        }


@dataclass
class SessionResult:
    record_id: str
    session_pk: int
    current_date: str
    turns: list[TurnResult] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {k: sum(t.counts[k] for t in self.turns) for k in COUNT_KEYS}

    @property
    def findings(self) -> int:
        return sum(len(warnings(t.findings)) for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id,
            "session_pk": self.session_pk,
            "current_date": self.current_date,
            "counts": self.counts,
            "turns": [t.to_dict() for t in self.turns],
        }


@dataclass
class AuditReport:
    bounds: str
    ran_at: dt.datetime
    sessions: list[SessionResult] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, Any]:
        counts = {k: sum(s.counts[k] for s in self.sessions) for k in COUNT_KEYS}
        turns = [t for s in self.sessions for t in s.turns]
        return {
            "sessions": len(self.sessions),
            "turns": len(turns),
            **counts,
            "findings": sum(len(warnings(t.findings)) for t in turns),
            "turns_with_findings": sum(1 for t in turns if warnings(t.findings)),
            "knowledge": sum(1 for t in turns for f in t.findings if f["kind"] == INFO_KIND),
            "representation": sum(1 for t in turns for c in t.calls if c.get("representation")),
            "reproduced_share": round(counts["reproduced"] / counts["calls"], 4) if counts["calls"] else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "bounds": self.bounds,
            "ran_at": self.ran_at.isoformat(),
            "totals": self.totals,
            "sessions": [s.to_dict() for s in self.sessions],
        }

    def totals_line(self) -> str:
        return totals_line(self.totals, bounds=self.bounds)


def warnings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f.get("kind") != INFO_KIND]


def totals_line(totals: dict[str, Any], *, bounds: str) -> str:
    share = totals.get("reproduced_share")
    pct = f" ({share * 100:.1f}%)" if share is not None else ""
    return (
        f"gold audit ({bounds} bounds): {totals['sessions']} session(s), {totals['turns']} turn(s); "
        f"EHR calls {totals['reproduced']}/{totals['calls']} reproduced{pct}, {totals['differs']} differ, "
        f"{totals.get('representation', 0)} with representation-only differences (ids, references, one-sided "
        "fields), "
        f"{totals['leaks']} leak(s); {totals['not_reexecuted']} patient/write/control step(s) not re-executed; "
        f"{totals['untraced']} untraced number(s) ({totals.get('knowledge', 0)} traced to the knowledge table); "
        f"{totals['premises']} possible false premise(s)"
    )


def session_table(result: SessionResult) -> list[str]:
    """One session as plain-text lines: a row per turn, then its findings in words."""
    rows = [_HEADINGS] + [
        (str(t.index), *(str(t.counts[k]) for k in COUNT_KEYS))
        for t in result.turns  # type: ignore[misc]
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADINGS))]
    lines = [f"{result.record_id} (current date {result.current_date})"]
    for n, row in enumerate(rows):
        lines.append(
            "  "
            + "  ".join(
                cell.rjust(w) if n and i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    for t in result.turns:
        for f in t.findings:
            mark = "~" if f["kind"] == INFO_KIND else "!"
            lines.append(f"  {mark} turn {t.index}: {f['message']}")
    return lines
