"""Downloads: leaderboard rows as CSV / JSON / Markdown / LaTeX (the paper's layout), a run's turns as CSV.

Percentages are written as in the paper (``12.3``); CSV and JSON keep the fractions of ``summary.json``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any

from core.csvcells import SafeDictWriter
from evaluation.models import EvalRun
from evaluation.reports import IDENTITY_FIELDS, row_of
from evaluation.results.selectors import LANGUAGES, PAPER_COLUMNS, columns, group_by_protocol, protocols_of

FORMATS = ("csv", "json", "latex", "markdown")
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _keys() -> list[str]:
    return [c.key for c in columns()] + ["judge", "status", "pending_turns"]


def leaderboard_csv(rows: Iterable[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = SafeDictWriter(buf, fieldnames=_keys(), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in _keys()})
    return buf.getvalue()


def leaderboard_json(rows: Iterable[dict[str, Any]]) -> str:
    return json.dumps([{k: row.get(k) for k in _keys()} for row in rows], ensure_ascii=False, indent=2)


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _pct(value: Any) -> str:
    return "--" if value is None else f"{100 * value:.1f}"


def _paper_cells(row: dict[str, Any]) -> list[str]:
    return [_pct(row.get(f"{lang}_{key}")) for lang in LANGUAGES for key, _h, _p in PAPER_COLUMNS]


def leaderboard_latex(rows: Iterable[dict[str, Any]]) -> str:
    """``Model & EN[L1 L2 L3 @T60 @S60 @T75 @S75] & ZH[…] \\\\`` with booktabs rules (values in %).

    The protocol is named in a comment; runs of several protocols are grouped under a labelled rule each.
    """
    rows = group_by_protocol(list(rows))
    protocols = protocols_of(rows)
    n = len(PAPER_COLUMNS)
    headers = " & ".join(h for _lang in LANGUAGES for _k, h, _p in PAPER_COLUMNS)
    groups = " & ".join(rf"\multicolumn{{{n}}}{{c}}{{{lang.upper()}}}" for lang in LANGUAGES)
    rules = "".join(rf"\cmidrule(lr){{{2 + i * n}-{1 + (i + 1) * n}}}" for i in range(len(LANGUAGES)))
    width = 1 + n * len(LANGUAGES)
    lines = [
        f"% protocol: {', '.join(protocols) or '-'}",
        r"\begin{tabular}{l" + ("c" * n) * len(LANGUAGES) + "}",
        r"\toprule",
        rf" & {groups} \\",
        rules,
        rf"Model & {headers} \\",
        r"\midrule",
    ]
    for row in rows:
        if len(protocols) > 1 and row["protocol_group_start"]:
            if row is not rows[0]:
                lines.append(r"\midrule")
            label = latex_escape(f"protocol: {row['protocol']}")
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{\emph{{{label}}}}} \\")
        lines.append(latex_escape(row["model"]) + " & " + " & ".join(_paper_cells(row)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def leaderboard_markdown(rows: Iterable[dict[str, Any]]) -> str:
    """The paper's columns with the protocol beside the model; runs of several protocols stay grouped."""
    rows = group_by_protocol(list(rows))
    headers = ["Model", "Protocol"] + [f"{lang.upper()} {h}" for lang in LANGUAGES for _k, h, _p in PAPER_COLUMNS]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        model, protocol = (str(row[k]).replace("|", r"\|") for k in ("model", "protocol"))
        lines.append("| " + " | ".join([model, protocol, *_paper_cells(row)]) + " |")
    if len(protocols_of(rows)) > 1:
        lines.append("")
        lines.append("Runs of different protocols are not comparable; they are grouped by protocol.")
    return "\n".join(lines) + "\n"


def render_leaderboard(rows: list[dict[str, Any]], *, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return {
        "csv": leaderboard_csv,
        "json": leaderboard_json,
        "latex": leaderboard_latex,
        "markdown": leaderboard_markdown,
    }[fmt](rows)


TURN_CSV_FIELDS = (
    *IDENTITY_FIELDS,
    "score",
    "passed",
    "scored",
    "unscored",
    "infra_error",
    "invalid_calls",
    "tool_faults",
    "unknown_arguments",
    "replay_misses",
    "end_reason",
    "safety_failed",
)


def run_turns_csv(*, run: EvalRun) -> Iterable[str]:
    """One CSV line per turn result, streamed (a large run never sits in memory as one string)."""
    buf = io.StringIO()
    writer = SafeDictWriter(buf, fieldnames=TURN_CSV_FIELDS, extrasaction="ignore", lineterminator="\n")

    def flush() -> str:
        text = buf.getvalue()
        buf.seek(0)
        buf.truncate()
        return text

    writer.writeheader()
    yield flush()
    for result in run.turn_results.all().iterator(chunk_size=500):
        row = row_of(result)
        row["safety_failed"] = sum(
            1 for v in result.verdicts or [] if v.get("is_safety") and v.get("scored") and not v.get("passed")
        )
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in TURN_CSV_FIELDS})
        yield flush()


def run_json(*, run: EvalRun) -> str:
    """The run's ``summary.json`` as stored."""
    return json.dumps(run.summary or {}, ensure_ascii=False, indent=2, default=str)
