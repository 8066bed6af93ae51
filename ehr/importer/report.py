"""Outcome of an import run: one entry per table, and the summary table printed at the end."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

TableStatus = Literal["loaded", "failed", "absent", "not_run"]


@dataclass
class TableReport:
    name: str
    path: Path | None = None  # the (first) file; ``files`` has all of them in the per-patient layout
    files: list[Path] = field(default_factory=list)
    status: TableStatus = "not_run"
    rows_loaded: int = 0
    rows_rejected: int = 0
    seconds: float = 0.0
    rebuild_seconds: float = 0.0  # PostgreSQL whole-table loads: rebuilding keys and indexes, within ``seconds``
    # Staged PostgreSQL loads (ehr.importer.staging): seconds of each index build, all run at once.
    index_seconds: dict[str, float] = field(default_factory=dict)
    # "copy-csv": raw bytes into PostgreSQL COPY; "copy-rows": validated rows into COPY; "insert": SQLite
    # batches; "copy-csv+copy-rows" when some files of the table went one way and some the other.
    method: str = ""
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    rejects_files: list[Path] = field(default_factory=list)

    @property
    def rejects_file(self) -> Path | None:
        """The first rejects file (the only one in the standard layout)."""
        return self.rejects_files[0] if self.rejects_files else None

    def how(self) -> str:
        how = f"{self.method} ({len(self.files)} files)" if len(self.files) > 1 else self.method
        if len(self.index_seconds) > 1:
            how += f", {len(self.index_seconds)} indexes built in parallel"
        return how


@dataclass
class ImportReport:
    root: Path
    tables: list[TableReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(t.status == "failed" for t in self.tables)

    @property
    def failed(self) -> TableReport | None:
        return next((t for t in self.tables if t.status == "failed"), None)

    def names(self, status: TableStatus) -> list[str]:
        return [t.name for t in self.tables if t.status == status]

    def rows_by_table(self) -> dict[str, int]:
        return {t.name: t.rows_loaded for t in self.tables if t.status == "loaded"}

    def outcome_line(self) -> str:
        """One line saying which tables were committed, rolled back and not run."""
        parts = [f"committed: {', '.join(self.names('loaded')) or 'none'}"]
        if failed := self.names("failed"):
            parts.append(f"rolled back: {', '.join(failed)}")
        if not_run := self.names("not_run"):
            parts.append(f"not run: {', '.join(not_run)}")
        return "; ".join(parts)


_STATUS_TEXT = {"loaded": "", "failed": "FAILED", "absent": "absent", "not_run": "not run"}


def format_summary(report: ImportReport) -> str:
    """Plain-text table: table, rows loaded, rejected, seconds, method/status."""
    header = ("table", "rows loaded", "rejected", "seconds", "how")
    rows = [
        (
            t.name,
            f"{t.rows_loaded:,}" if t.status == "loaded" else "-",
            f"{t.rows_rejected:,}" if t.rows_rejected or t.status == "loaded" else "-",
            f"{t.seconds:.2f}" if t.status in ("loaded", "failed") else "-",
            _STATUS_TEXT[t.status] or t.how(),
        )
        for t in report.tables
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for r in [header, *rows]:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:4], widths[1:4], strict=True)] + [r[4]]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    total = sum(t.rows_loaded for t in report.tables if t.status == "loaded")
    rejected = sum(t.rows_rejected for t in report.tables)
    lines.append(f"{total:,} rows loaded, {rejected:,} rejected. {report.outcome_line()}.")
    return "\n".join(lines)
